"""Tool calls a model wrote into its text, in the qwen3_coder XML format, read into OpenAI ``tool_calls``.

    parser = choose_parser(tokenizer="/models/qwen3.5-4b")   # vLLM's own class when vLLM imports, else ours
    turn = parser.parse(text, tools)          # tools: OpenAI ``tools`` entries (they give the parameter types)
    turn.content, turn.calls, turn.problems

The format (Qwen3.5; ``vllm serve --tool-call-parser qwen3_coder`` and verl's ``multi_turn.format=qwen3_coder``)::

    <tool_call>
    <function=NAME>
    <parameter=P>
    V
    </parameter>
    </function>
    </tool_call>

A model server started with ``--tool-call-parser`` already returns structured ``tool_calls``; this module is
for the replies where the calls are still text (a server without the parser, llama.cpp with a Qwen GGUF).
vLLM's ``qwen3_coder`` parser class is used when ``vllm`` is importable (its parsers import on CPU) and a
tokenizer with the ``<tool_call>`` tokens is given; otherwise ``FallbackQwen3CoderParser`` applies the same
rules, and also says what is wrong with a call it cannot read (``problems``), so that the model is told
instead of the call being dropped.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["FALLBACK_PARSER", "VLLM_PARSER", "FallbackQwen3CoderParser", "ParsedCall", "ParsedTurn", "ToolCallParser",
           "VllmQwen3CoderParser", "choose_parser", "vllm_importable"]

VLLM_PARSER = "vllm.qwen3_coder"
FALLBACK_PARSER = "kopa.qwen3_coder"
FORMAT_HINT = ("write each call as <tool_call>\\n<function=NAME>\\n<parameter=P>\\nVALUE\\n</parameter>\\n"
               "</function>\\n</tool_call>")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FUNCTION = re.compile(r"^\s*<function=([^>\n]*)>(.*?)</function>\s*$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>", re.DOTALL)


@dataclass(frozen=True)
class ParsedCall:
    """One call read from the text: the tool name and its arguments (a dict)."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ParsedTurn:
    """An assistant message read: the text before the calls, the calls, and what could not be read."""

    content: str
    calls: tuple[ParsedCall, ...] = ()
    problems: tuple[str, ...] = field(default=())


class ToolCallParser(Protocol):
    name: str

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]]) -> ParsedTurn: ...


def _declared_types(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """tool -> parameter -> JSON type ('string' where the schema names none)."""
    out: dict[str, dict[str, str]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        props = (function.get("parameters") or {}).get("properties") or {}
        types: dict[str, str] = {}
        for pname, prop in props.items():
            t = prop.get("type") if isinstance(prop, Mapping) else None
            if isinstance(t, list):
                t = next((x for x in t if x != "null"), "string")
            types[pname] = t if isinstance(t, str) else "string"
        out[str(function.get("name"))] = types
    return out


def _convert(value: str, declared: str | None) -> Any:
    """A parameter's text as its declared type (vLLM's qwen3_coder rules); text that does not convert stays text."""
    if value.lower() == "null":
        return None
    if declared in (None, "string"):
        return value
    try:
        if declared == "integer":
            return int(value)
        if declared == "number":
            number = float(value)
            return int(number) if number.is_integer() and "." not in value else number
        if declared == "boolean":
            if value.lower() in ("true", "false"):
                return value.lower() == "true"
            return value
        return json.loads(value)  # object, array
    except ValueError:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value


def _strip_newlines(value: str) -> str:
    value = value[1:] if value.startswith("\n") else value
    return value[:-1] if value.endswith("\n") else value


class FallbackQwen3CoderParser:
    """The qwen3_coder rules without vLLM, strict about structure: a block it cannot read is a problem, not a gap."""

    name = FALLBACK_PARSER

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> ParsedTurn:
        start = text.find("<tool_call>")
        if start == -1:
            if "</tool_call>" in text or "<function=" in text:
                return ParsedTurn(content=text, problems=(f"the reply has a tool call without <tool_call>; "
                                                          f"{FORMAT_HINT}",))
            return ParsedTurn(content=text)
        types = _declared_types(tools)
        calls: list[ParsedCall] = []
        problems: list[str] = []
        for i, block in enumerate(_BLOCK.findall(text[start:])):
            call, problem = self._block(block, types)
            if call is not None:
                calls.append(call)
            else:
                problems.append(f"tool call {i + 1} could not be read: {problem}; {FORMAT_HINT}")
        return ParsedTurn(content=text[:start].rstrip(), calls=tuple(calls), problems=tuple(problems))

    @staticmethod
    def _block(block: str, types: Mapping[str, Mapping[str, str]]) -> tuple[ParsedCall | None, str]:
        match = _FUNCTION.match(block)
        if match is None:
            if block.lstrip().startswith("{"):
                return None, "it holds JSON, not <function=NAME> with <parameter=...> elements"
            if "<function=" not in block:
                return None, "no <function=NAME> inside <tool_call>"
            return None, "<function=...> is not closed by </function>"
        name, body = match.group(1).strip(), match.group(2)
        if not _NAME.fullmatch(name):
            return None, f"{name[:60]!r} is not a tool name"
        declared = types.get(name, {})
        args: dict[str, Any] = {}
        for pname, value in _PARAMETER.findall(body):
            pname = pname.strip()
            if not _NAME.fullmatch(pname):
                return None, f"{pname[:60]!r} is not a parameter name (in {name})"
            args[pname] = _convert(_strip_newlines(value), declared.get(pname))
        rest = _PARAMETER.sub("", body)
        if rest.strip():
            what = "an unclosed <parameter=...>" if "<parameter=" in rest else f"stray text {rest.strip()[:60]!r}"
            return None, f"{what} inside <function={name}>"
        return ParsedCall(name, args), ""


def vllm_importable() -> bool:
    """Whether the ``vllm`` package is installed (found without importing it: importing costs seconds)."""
    return importlib.util.find_spec("vllm") is not None


def _vllm_parser_class() -> Any:
    """vLLM's registered ``qwen3_coder`` parser class (the module moved between vLLM releases)."""
    try:
        from vllm.tool_parsers import ToolParserManager  # type: ignore[import-not-found]
    except ImportError:
        from vllm.entrypoints.openai.tool_parsers import ToolParserManager  # type: ignore[import-not-found]
    return ToolParserManager.get_tool_parser("qwen3_coder")


def _vllm_request_class() -> Any:
    try:
        from vllm.entrypoints.openai.chat_completion.protocol import (  # type: ignore[import-not-found]
            ChatCompletionRequest,
        )
    except ImportError:
        from vllm.entrypoints.openai.protocol import ChatCompletionRequest  # type: ignore[import-not-found]
    return ChatCompletionRequest


class VllmQwen3CoderParser:
    """vLLM's own ``qwen3_coder`` parser; a block it reads as no call is reported by the fallback's rules."""

    name = VLLM_PARSER

    def __init__(self, tokenizer: Any) -> None:
        self._class, self._request = _vllm_parser_class(), _vllm_request_class()
        self._tokenizer = tokenizer
        self._make([])  # fails here when the tokenizer lacks the <tool_call> tokens

    def _make(self, tools: Sequence[Mapping[str, Any]]) -> Any:
        """A fresh parser (an instance keeps streaming state); newer vLLM releases also take the request's tools."""
        if "tools" in inspect.signature(self._class).parameters:
            return self._class(self._tokenizer, tools=list(tools))
        return self._class(self._tokenizer)

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> ParsedTurn:
        if "<tool_call>" not in text:
            return FallbackQwen3CoderParser().parse(text, tools)
        request = self._request(model="kopa", messages=[{"role": "user", "content": ""}], tools=list(tools) or None)
        info = self._make(tools).extract_tool_calls(text, request)
        calls = []
        for item in info.tool_calls if info.tools_called else ():
            try:
                arguments = json.loads(item.function.arguments or "{}")
            except ValueError:
                arguments = None
            if isinstance(arguments, dict):
                calls.append(ParsedCall(item.function.name, arguments))
        if calls:
            return ParsedTurn(content=(info.content or "").rstrip(), calls=tuple(calls))
        # vLLM found no readable call in text that has one: say why, as the fallback would
        fallback = FallbackQwen3CoderParser().parse(text, tools)
        problems = fallback.problems or (f"the tool call could not be read; {FORMAT_HINT}",)
        return ParsedTurn(content=fallback.content, problems=problems)


def choose_parser(tokenizer: Any = None) -> ToolCallParser:
    """vLLM's ``qwen3_coder`` parser when vLLM imports and ``tokenizer`` (an object or a path) suits it, else ours.

    ``tokenizer`` is the served model's: a Hugging Face tokenizer, or the path it loads from.
    """
    if tokenizer is not None and vllm_importable():
        try:
            if isinstance(tokenizer, str):
                from transformers import AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(tokenizer)
            return VllmQwen3CoderParser(tokenizer)
        except Exception:  # noqa: BLE001 - vLLM or the tokenizer unusable here: the fallback reads the same format
            pass
    return FallbackQwen3CoderParser()
