"""Argument validation against a ToolSpec, with messages that name the field and the fix."""

from __future__ import annotations

import math
from typing import Any

from ..catalog.spec import ParamKind, ParamSpec, ToolSpec

_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                            "boolean": (bool,)}
_JSON_NAMES: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
                                dict: "object", type(None): "null"}
INTEGER_BITS = 63  # integers must fit a signed 64-bit field, as every upstream's do
_SHOWN_CHARS = 40  # how much of a wrong value a message repeats


class ArgumentError(ValueError):
    """Arguments do not fit the tool's schema. ``missing`` tells MISSING_FIELD from SCHEMA_MISMATCH; ``param`` is
    the parameter a missing value belongs to."""

    def __init__(self, message: str, *, missing: bool = False, param: ParamSpec | None = None):
        super().__init__(message)
        self.missing, self.param = missing, param


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (Python's names mean nothing to a model)."""
    return _JSON_NAMES.get(type(value), type(value).__name__)


def shown(text: str) -> str:
    """``repr`` of at most the first 40 characters of ``text``: what a message repeats of a value."""
    return repr(text[:_SHOWN_CHARS]) + ("…" if len(text) > _SHOWN_CHARS else "")


def describe(value: Any) -> str:
    """A short, bounded description of a value for an error message (never the whole of a large value)."""
    if isinstance(value, str):
        return f"string {shown(value)}" + (f" ({len(value):,} characters)" if len(value) > _SHOWN_CHARS else "")
    if isinstance(value, list):
        return f"array of {len(value):,} items"
    if isinstance(value, dict):
        return f"object with {len(value):,} keys"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"integer of {value.bit_length():,} bits"  # str() of a huge int raises ValueError
    return f"{json_type(value)} {value!r}"


def _text_problem(value: str) -> str | None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: decodable JSON, but no UTF-8 can carry it upstream
        return f"is not valid Unicode text (lone surrogate {value[exc.start]!r} at index {exc.start}); send UTF-8 text"
    return None


def _number_problem(value: int | float) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number; got {value!r}"
    if isinstance(value, int) and abs(value) >> INTEGER_BITS:
        return f"must fit in a 64-bit integer; got an integer of {value.bit_length():,} bits"
    return None


def validate_arguments(spec: ToolSpec, args: dict[str, Any], visible: frozenset[ParamKind]) -> dict[str, Any]:
    """Check ``args`` against the parameters the profile shows; returns them with defaults filled."""
    if not isinstance(args, dict):
        raise ArgumentError(f"{spec.name}: arguments must be a JSON object, got {json_type(args)}")
    params = {p.name: p for p in spec.params if not p.is_generic or p.kind in visible}
    unknown = sorted(set(args) - set(params), key=str)
    if unknown:
        names = ", ".join(shown(str(u)) for u in unknown[:10]) + (" …" if len(unknown) > 10 else "")
        raise ArgumentError(f"{spec.name}: unknown parameter(s) {names}; "
                            f"this tool takes: {', '.join(params) or 'no parameters'}")
    out: dict[str, Any] = {}
    for name, p in params.items():
        value = args.get(name)
        if value is None:
            if p.required:
                raise ArgumentError(f"{spec.name}: missing required parameter {name!r} ({p.description_ko})",
                                    missing=True, param=p)
            if p.default is not None:
                out[name] = p.default
            continue
        expected = _JSON_TYPES[p.type]
        if isinstance(value, bool) and p.type != "boolean" or not isinstance(value, expected):
            raise ArgumentError(f"{spec.name}: parameter {name!r} expects {p.type}, got {describe(value)}")
        problem = _text_problem(value) if isinstance(value, str) else (
            _number_problem(value) if not isinstance(value, bool) else None)
        if problem:
            raise ArgumentError(f"{spec.name}: parameter {name!r} {problem}")
        if p.enum and str(value) not in p.enum:
            raise ArgumentError(f"{spec.name}: parameter {name!r} must be one of {', '.join(p.enum)}; "
                                f"got {describe(value)}")
        if p.kind in (ParamKind.PAGE_NO, ParamKind.PAGE_SIZE) and value < 1:
            raise ArgumentError(f"{spec.name}: parameter {name!r} must be 1 or more; got {value}")
        out[name] = value
    return out
