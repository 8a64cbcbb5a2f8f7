"""Argument validation against a ToolSpec, with messages that name the field and the fix."""

from __future__ import annotations

from typing import Any

from ..catalog.spec import ParamKind, ToolSpec

_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                            "boolean": (bool,)}


class ArgumentError(ValueError):
    """Arguments do not fit the tool's schema. ``missing`` tells MISSING_FIELD from SCHEMA_MISMATCH."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def validate_arguments(spec: ToolSpec, args: dict[str, Any], visible: frozenset[ParamKind]) -> dict[str, Any]:
    """Check ``args`` against the parameters the profile shows; returns them with defaults filled."""
    if not isinstance(args, dict):
        raise ArgumentError(f"{spec.name}: arguments must be a JSON object, got {type(args).__name__}")
    params = {p.name: p for p in spec.params if not p.is_generic or p.kind in visible}
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise ArgumentError(f"{spec.name}: unknown parameter(s) {', '.join(map(repr, unknown))}; "
                            f"this tool takes: {', '.join(params) or 'no parameters'}")
    out: dict[str, Any] = {}
    for name, p in params.items():
        value = args.get(name)
        if value is None:
            if p.required:
                raise ArgumentError(f"{spec.name}: missing required parameter {name!r} ({p.description_ko})",
                                    missing=True)
            if p.default is not None:
                out[name] = p.default
            continue
        expected = _JSON_TYPES[p.type]
        if isinstance(value, bool) and p.type != "boolean" or not isinstance(value, expected):
            raise ArgumentError(f"{spec.name}: parameter {name!r} expects {p.type}, got "
                                f"{type(value).__name__} {value!r}")
        if p.enum and str(value) not in p.enum:
            raise ArgumentError(f"{spec.name}: parameter {name!r} must be one of {', '.join(p.enum)}; got {value!r}")
        if p.kind in (ParamKind.PAGE_NO, ParamKind.PAGE_SIZE) and value < 1:
            raise ArgumentError(f"{spec.name}: parameter {name!r} must be 1 or more; got {value}")
        out[name] = value
    return out
