"""The output-schema check of the official MCP client, made fast for the plain schemas the gateway publishes.

    async with Client(streamable_http_client(url, http_client=http)) as client:
        fast_output_checks(client.session)     # the same checks, the same errors; a 1,000-record page ~40x faster

The SDK's ``ClientSession.call_tool`` checks every result's structured content against the tool's output
schema with ``jsonschema`` (a validator compiled once per tool and cached, Draft 2020-12 unless the schema
says otherwise). The gateway's output schemas are a page envelope around a record schema: an object with
``type``/``properties``/``required``, an ``items`` array of records whose every field is
``{"type": [T, "null"]}``. ``jsonschema`` interprets that schema per value (a validator object made, a
resource resolved, for each of a page's ~10,000 fields): ~90 % of a 1,000-record page's replay time.

``compile_check`` turns a schema made of only ``type``, ``properties``, ``required``, ``items`` (and the
annotations ``description``, ``title``, ``default``, ``examples``, ``$comment``) into nested closures that
answer valid/invalid with Draft 2020-12's semantics (an ``integer`` is an int, not a bool, or an integral
float; a ``number`` any non-bool number; ``object`` a dict; ``array`` a list); any other keyword (``$ref``,
``enum``, ``pattern``, ``additionalProperties``, a ``$schema``, ...) and it returns None. ``fast_output_checks``
puts it in front of the SDK's own validator: content the closures find valid is valid (the SDK would find no
error), anything else goes to the SDK's validator, which finds the error and words it as it always does; a
schema the closures cannot take is checked by the SDK's validator alone. The SDK still checks the schema
itself, caches per tool, and evicts on a changed listing: the fast check follows its validator.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator
from typing import Any

Check = Callable[[Any], bool]

ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated", "readOnly",
                         "writeOnly"})
KEYWORDS = frozenset({"type", "properties", "required", "items"}) | ANNOTATIONS
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Number)


# Draft 2020-12's type checker (jsonschema._types.draft202012_type_checker)
_CLASSES: dict[str, type | tuple[type, ...]] = {"string": str, "object": dict, "array": list, "boolean": bool}
_OTHER: dict[str, Check] = {"integer": _is_integer, "number": _is_number}
TYPES = frozenset(_CLASSES) | frozenset(_OTHER) | {"null"}


def compile_check(schema: Any) -> Check | None:
    """``schema`` (the whole output schema) as a function instance → valid, or None when it uses anything beyond
    the plain subset (its ``$schema``, if any, must be Draft 2020-12's)."""
    if isinstance(schema, dict) and "$schema" in schema:
        if schema["$schema"] not in (DRAFT_2020_12, DRAFT_2020_12 + "#"):
            return None
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    return _compile(schema)


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _type_check(declared: Any) -> Check | None:
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in TYPES for n in names):
        return None
    classes = tuple(c for n in names if n in _CLASSES for c in (_CLASSES[n] if isinstance(_CLASSES[n], tuple)
                                                                   else (_CLASSES[n],)))
    others = tuple(_OTHER[n] for n in names if n in _OTHER)
    nullable = "null" in names
    if not others:
        accepted = (*classes, type(None)) if nullable else classes

        def by_class(x: Any) -> bool:
            return isinstance(x, accepted)
        by_class.classes = accepted  # type: ignore[attr-defined]  # an object's check inlines it (no call per field)
        return by_class

    def check(x: Any) -> bool:
        return (nullable and x is None) or isinstance(x, classes) or any(o(x) for o in others)
    return check


def _compile(schema: Any) -> Check | None:
    if schema is True:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, dict) or not set(schema) <= KEYWORDS:
        return None
    type_check = _type_check(schema["type"]) if "type" in schema else _always
    if type_check is None:
        return None

    props: dict[str, Check] = {}
    if "properties" in schema:
        if not isinstance(schema["properties"], dict):
            return None
        for name, sub in schema["properties"].items():
            compiled = _compile(sub)
            if compiled is None:
                return None
            if compiled is not _always:
                props[name] = compiled
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    item_check = None
    if "items" in schema:
        item_check = _compile(schema["items"])
        if item_check is None:
            return None
        if item_check is _always:
            item_check = None

    if type_check is _always and not props and not required and item_check is None:
        return _always
    if not props and not required and item_check is None:
        return type_check  # a plain type check (its classes, if any, go with it)
    # Properties checked by class alone (``{"type": ["string", "null"]}``, a record's usual field) are one
    # isinstance each, inline; the others call their own check.
    by_class: dict[str, tuple[type, ...]] = {n: c.classes for n, c in props.items() if hasattr(c, "classes")}
    by_call = {n: c for n, c in props.items() if n not in by_class}

    def check(x: Any) -> bool:
        if not type_check(x):
            return False
        if isinstance(x, dict):
            for name in required:
                if name not in x:
                    return False
            if props:
                if len(x) <= len(props):
                    for name, value in x.items():
                        classes = by_class.get(name)
                        if classes is not None:
                            if not isinstance(value, classes):
                                return False
                        else:
                            sub = by_call.get(name)
                            if sub is not None and not sub(value):
                                return False
                else:
                    for name, sub in props.items():
                        if name in x and not sub(x[name]):
                            return False
        elif item_check is not None and isinstance(x, list):
            for item in x:
                if not item_check(item):
                    return False
        return True
    return check


class FastPathValidator:
    """A ``jsonschema`` validator with a compiled check in front: ``iter_errors`` yields nothing for content the
    check finds valid, else exactly what the wrapped validator yields."""

    def __init__(self, check: Check, validator: Any):
        self.check, self.validator = check, validator

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        if self.check(instance):
            return iter(())
        return self.validator.iter_errors(instance)

    def is_valid(self, instance: Any) -> bool:
        return self.check(instance) or self.validator.is_valid(instance)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.validator, name)


def fast_output_checks(session: Any) -> bool:
    """Put ``compile_check`` in front of ``session``'s (an ``mcp.ClientSession``) output-schema validator; False
    when this SDK has no per-tool validator to wrap (the session then checks as it did)."""
    original = getattr(session, "_output_schema_validator", None)
    if original is None or getattr(original, "kopa_fast", False):
        return original is not None
    wrapped: dict[str, tuple[Any, Any]] = {}  # tool → (the SDK's validator, what is handed back for it)

    def validator(name: str, output_schema: dict[str, Any]) -> Any:
        inner = original(name, output_schema)  # checks the schema; cached by the SDK, evicted on a new listing
        entry = wrapped.get(name)
        if entry is None or entry[0] is not inner:
            check = compile_check(output_schema)
            entry = (inner, inner if check is None else FastPathValidator(check, inner))
            wrapped[name] = entry
        return entry[1]

    validator.kopa_fast = True  # type: ignore[attr-defined]
    session._output_schema_validator = validator
    return True
