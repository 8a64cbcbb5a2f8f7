"""The qwen3_coder tool-call format (Qwen3.5, paper Appendix I): parse an assistant message, render calls.

    turn = parse_assistant(text, tools)      # tools: OpenAI ``tools`` entries, for the parameter types
    turn.content, [(c.name, c.arguments) for c in turn.calls]
    text = render_assistant("", [ToolCall("get_x", {"KEY": "kopa-…"})])

The format (what Qwen3.5 emits and verl's ``qwen3_coder`` parser reads)::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

Values are converted by the declared parameter type (integer, number, boolean, object; anything else kept as
a string, arrays through ``ast.literal_eval``). Parsing uses verl's own ``Qwen3XMLToolParser`` when verl is
importable, so training and this module read a model's output the same way; without verl a copy of its rules
is used (``parser_name()`` says which).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AssistantTurn", "ToolCall", "parse_assistant", "parser_name", "render_assistant", "render_tool_calls"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Any  # a dict when the call parsed; the raw text otherwise (the runtime refuses it, ACTION counts it)


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant message: its text before the calls, and the calls in the order they were written."""

    content: str
    calls: tuple[ToolCall, ...] = ()
    raw: str = field(default="", repr=False)  # the whole text as generated


@functools.cache
def _verl_parser() -> Any | None:
    """verl's parser, imported on first use (verl pulls in torch and ray: seconds, not at import)."""
    try:
        with warnings.catch_warnings():  # ray warns of its own deprecations on import; not ours to fix
            warnings.simplefilter("ignore", DeprecationWarning)
            from verl.experimental.agent_loop.tool_parser import Qwen3XMLToolParser
    except Exception:  # noqa: BLE001 - verl (or torch, ray) absent or broken: use the copy below
        return None
    return Qwen3XMLToolParser(tokenizer=None)


def parser_name() -> str:
    """Which parser ``parse_assistant`` uses here."""
    return "verl.qwen3_coder" if _verl_parser() is not None else "train.toolcalls (copy of verl's qwen3_coder rules)"

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$", re.DOTALL)
_FUNCTION = re.compile(r"<function=(.*?)</function>|<function=(.*)$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=(.*?)</parameter>|<parameter=(.*?)$", re.DOTALL)


def _property_types(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """tool name -> parameter -> declared JSON type ('string' where the schema gives none, e.g. anyOf)."""
    out: dict[str, dict[str, str]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        props = (function.get("parameters") or {}).get("properties") or {}
        types = {}
        for name, prop in props.items():
            t = prop.get("type") if isinstance(prop, Mapping) else None
            if isinstance(t, list):  # ["integer", "null"]: the first non-null
                t = next((x for x in t if x != "null"), "string")
            types[name] = t if isinstance(t, str) else "string"
        out[str(function.get("name"))] = types
    return out


def _verl_schemas(tools: Sequence[Mapping[str, Any]]) -> list[Any]:
    """verl's pydantic tool schemas, reduced to what its parser reads (each property's type)."""
    from verl.tools.schemas import OpenAIFunctionToolSchema

    schemas = []
    for name, types in _property_types(tools).items():
        schemas.append(OpenAIFunctionToolSchema.model_validate({"type": "function", "function": {
            "name": name, "description": "", "parameters": {
                "type": "object", "properties": {k: {"type": t} for k, t in types.items()}, "required": []}}}))
    return schemas


def _convert(value: str, declared: str | None) -> Any:
    """verl's qwen3_coder conversion rules (``Qwen3XMLToolParser._parse_xml_function_call``)."""
    if value.lower() == "null":
        return None
    if declared is None:
        return value
    t = declared.strip().lower()
    if t in ("string", "str", "text", "varchar", "char", "enum"):
        return value
    if t.startswith(("int", "uint", "long", "short", "unsigned")):
        try:
            return int(value)
        except ValueError:
            return value
    if t.startswith(("num", "float")):
        try:
            number = float(value)
        except ValueError:
            return value
        return number if number - int(number) != 0 else int(number)
    if t in ("boolean", "bool", "binary"):
        return value.lower() == "true"
    if t == "object" or t.startswith("dict"):
        try:
            return json.loads(value)
        except ValueError:
            pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value


def _parse_function(text: str, types: Mapping[str, Mapping[str, str]]) -> ToolCall | None:
    end = text.find(">")
    if end == -1:
        return None
    name, body = text[:end], text[end + 1:]
    declared = types.get(name, {})
    args: dict[str, Any] = {}
    for match in _PARAMETER.findall(body):
        item = match[0] or match[1]
        cut = item.find(">")
        if cut == -1:
            continue
        key, value = item[:cut], item[cut + 1:]
        value = value[1:] if value.startswith("\n") else value
        value = value[:-1] if value.endswith("\n") else value
        args[key] = _convert(value, declared.get(key)) if declared else value
    return ToolCall(name, args)


def parse_assistant(text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn:
    """The content and tool calls of ``text`` as the qwen3_coder parser reads them.

    No ``<tool_call>`` in the text means no calls (the model answered). A call whose arguments the parser
    cannot read as JSON keeps its raw text as ``arguments``.
    """
    if "<tool_call>" not in text:
        return AssistantTurn(content=text, raw=text)
    content = text[:text.find("<tool_call>")]
    parser = _verl_parser()
    if parser is not None:
        raw_calls = parser._get_function_calls(text)
        schemas = _verl_schemas(tools)
        calls = []
        for raw in raw_calls:
            parsed = parser._parse_xml_function_call(raw, schemas)
            if parsed is None:
                continue
            try:
                arguments: Any = json.loads(parsed.arguments)
            except (TypeError, ValueError):
                arguments = parsed.arguments
            calls.append(ToolCall(parsed.name, arguments))
        return AssistantTurn(content=content, calls=tuple(calls), raw=text)
    types = _property_types(tools)
    found = [m[0] or m[1] for m in _TOOL_CALL.findall(text)] or [text]
    functions = [f[0] or f[1] for block in found for f in _FUNCTION.findall(block)]
    calls = [c for c in (_parse_function(f, types) for f in functions) if c is not None]
    return AssistantTurn(content=content, calls=tuple(calls), raw=text)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


def render_tool_calls(calls: Sequence[ToolCall]) -> str:
    """``calls`` in the qwen3_coder format, one ``<tool_call>`` block each (the Qwen3.5 chat template's layout)."""
    blocks = []
    for call in calls:
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        params = "".join(f"<parameter={k}>\n{_value_text(v)}\n</parameter>\n" for k, v in args.items())
        blocks.append(f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>")
    return "\n".join(blocks)


def render_assistant(content: str, calls: Sequence[ToolCall] = ()) -> str:
    """A whole assistant message: ``content``, then the calls."""
    if not calls:
        return content
    return (content + "\n\n" if content else "") + render_tool_calls(calls)
