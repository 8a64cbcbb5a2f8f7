"""The one value-typing rule: a parameter's value as the tool's JSON Schema declares it.

    types = parameter_types(tools)                 # tools: OpenAI ``tools`` entries
    read_value("3.0", types["list_things"]["pageNo"])          # -> 3
    type_arguments({"pageNo": "2"}, types["list_things"])      # -> {"pageNo": 2}

Every reader uses it (qwen3_coder XML, hermes JSON, OpenAI structured ``tool_calls``), so a reply means the same
thing to the bench agents, the agent endpoint, the training rollouts and the reward.

**Declared type** of a parameter: its schema's ``type`` (a list: the first that is not ``"null"``); else the
types of its ``anyOf`` / ``oneOf`` alternatives, tried in order; else the Python types of its ``enum`` values,
tried in order; no declared type: the text is kept.

**A text value** (an XML parameter; a string where the schema wants something else):

* ``"null"`` in any case is None (the qwen3_coder rule; vLLM and verl agree). In structured JSON a JSON null is
  None, and a string parameter's ``"null"`` stays ``"null"`` (strings are never converted);
* string, or undeclared: the text as it is;
* integer: an integer literal (whitespace stripped) is an int; a decimal literal with a zero fraction (``"3.0"``)
  is that int (JSON Schema counts 3.0 as an integer); anything else stays text, which the gateway runtime
  refuses with ``schema_mismatch``, so the model is told;
* number: an integer literal is an int; a finite float literal is a float, but an integral one is an int
  (``"3.0"`` -> 3, as vLLM and verl do); ``nan``, ``inf`` and anything else stay text;
* boolean: ``true`` / ``false`` in any case (whitespace stripped); anything else (``"yes"``, ``"1"``) stays text:
  no guessing;
* object / array: JSON (``json.loads(strict=False)``) of that kind; else a Python literal (``ast.literal_eval``)
  of that kind (a dict, a list); else text.

**Structured arguments** (OpenAI ``tool_calls``, hermes ``arguments``): values that are already JSON-typed are
kept; a top-level string whose declared type is integer, number, boolean, object or array goes through the text
rule above (a model writing ``{"page": "2"}`` means 2).

Every text read has its lone surrogates replaced by U+FFFD (``mcp_gateway.text.scrub_surrogates``).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcp_gateway.text import scrub_surrogates

__all__ = ["NON_STRING_TYPES", "ParameterTypes", "declared_types", "parameter_types", "read_value", "type_arguments"]

NON_STRING_TYPES = frozenset({"integer", "number", "boolean", "object", "array"})

ParameterTypes = Mapping[str, tuple[str, ...]]
"""parameter name -> its declared types, in the order they are tried (empty: undeclared)."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_ZERO_FRACTION = re.compile(r"([+-]?[0-9]+)\.0*")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_ENUM_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (dict, "object"),
               (list, "array"))  # bool before int: True is an int in Python


def declared_types(schema: Any) -> tuple[str, ...]:
    """The types a parameter's ``schema`` declares, in the order they are tried (module doc); () when none."""
    if not isinstance(schema, Mapping):
        return ()
    kind = schema.get("type")
    if isinstance(kind, str):
        return () if kind == "null" else (kind,)
    if isinstance(kind, list):
        first = next((k for k in kind if isinstance(k, str) and k != "null"), None)
        return (first,) if first else ()
    out: list[str] = []
    for key in ("anyOf", "oneOf"):
        alternatives = schema.get(key)
        if isinstance(alternatives, list):
            for alternative in alternatives:
                out.extend(t for t in declared_types(alternative) if t not in out)
    if not out and isinstance(schema.get("enum"), list):
        for value in schema["enum"]:
            name = next((n for python, n in _ENUM_TYPES if isinstance(value, python)), None)
            if name and name not in out:
                out.append(name)
    return tuple(out)


def parameter_types(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, tuple[str, ...]]]:
    """tool name -> parameter -> declared types, from OpenAI ``tools`` entries (or bare function schemas)."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        parameters = function.get("parameters") if isinstance(function, Mapping) else None
        props = parameters.get("properties") if isinstance(parameters, Mapping) else None
        props = props if isinstance(props, Mapping) else {}
        out[str(function.get("name"))] = {str(name): declared_types(schema) for name, schema in props.items()}
    return out


def _as_integer(text: str) -> tuple[bool, Any]:
    s = text.strip()
    if _INTEGER.fullmatch(s):
        return True, int(s)
    match = _ZERO_FRACTION.fullmatch(s)
    return (True, int(match.group(1))) if match else (False, None)


def _as_number(text: str) -> tuple[bool, Any]:
    s = text.strip()
    if _INTEGER.fullmatch(s):
        return True, int(s)
    if not _FLOAT.fullmatch(s):
        return False, None
    number = float(s)
    if not math.isfinite(number):  # 1e999
        return False, None
    return True, int(number) if number.is_integer() else number


def _as_boolean(text: str) -> tuple[bool, Any]:
    s = text.strip().lower()
    return (True, s == "true") if s in ("true", "false") else (False, None)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")  # json.loads would take NaN and Infinity


def _container(kind: type) -> Callable[[str], tuple[bool, Any]]:
    def convert(text: str) -> tuple[bool, Any]:
        try:
            value = json.loads(text, strict=False, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, kind):
            return True, scrub_surrogates(value)
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False, None
        return (True, scrub_surrogates(value)) if isinstance(value, kind) else (False, None)

    return convert


_CONVERTERS: dict[str, Callable[[str], tuple[bool, Any]]] = {
    "string": lambda text: (True, text), "integer": _as_integer, "number": _as_number, "boolean": _as_boolean,
    "object": _container(dict), "array": _container(list)}


def read_value(text: str, types: Sequence[str] = (), *, null: bool = True) -> Any:
    """``text`` as the first of ``types`` it converts to (module doc); the text itself when none does.

    ``null``: whether ``"null"`` (any case) is None whatever the type (XML values; structured strings of a
    non-string parameter).
    """
    text = scrub_surrogates(text)
    if null and text.strip().lower() == "null":
        return None
    for kind in types:
        convert = _CONVERTERS.get(kind)
        if convert is None:  # a type JSON Schema does not name: nothing to convert to
            continue
        converted, value = convert(text)
        if converted:
            return value
    return text


def type_arguments(arguments: Mapping[str, Any], types: ParameterTypes) -> dict[str, Any]:
    """Structured ``arguments`` with each string of a non-string parameter read by the text rule (module doc)."""
    out: dict[str, Any] = {}
    for name, value in scrub_surrogates(dict(arguments)).items():
        declared = types.get(name, ())
        if isinstance(value, str) and declared and declared[0] in NON_STRING_TYPES:  # string first: kept as is
            value = read_value(value, declared)
        out[name] = value
    return out
