"""vLLM's own ``qwen3_coder`` parser behind the reader interface: the yardstick our qwen3_coder reading is held to.

    if vllm_importable():
        turn = VllmQwen3CoderParser(tokenizer).parse(text, tools)

Nothing in the appliance reads replies with it (one typing rule everywhere: ``models.toolcalls.values``); the
parity check (``benchmarks/vllm_parser_parity.py`` and ``tests/models/test_parity.py``) does, where vLLM is
installed. vLLM's parsers import on CPU; the parser needs a tokenizer that has the ``<tool_call>`` and
``</tool_call>`` tokens.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_gateway.text import scrub_surrogates

from .text import QWEN3_CODER, TextReader
from .turn import AssistantTurn, ToolCall

__all__ = ["VLLM_PARSER", "VllmQwen3CoderParser", "vllm_importable"]

VLLM_PARSER = "vllm.qwen3_coder"


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
    """vLLM's ``qwen3_coder`` parser; a reply it reads as no call is reported by our reader's rules."""

    name = VLLM_PARSER

    def __init__(self, tokenizer: Any) -> None:
        """
        Raises:
            ImportError: vLLM is not importable.
            RuntimeError: the tokenizer lacks the ``<tool_call>`` tokens (vLLM's own error).
        """
        self._class, self._request = _vllm_parser_class(), _vllm_request_class()
        self._tokenizer = tokenizer
        self._ours = TextReader([QWEN3_CODER])
        self._make([])  # fails here when the tokenizer lacks the <tool_call> tokens

    def _make(self, tools: Sequence[Mapping[str, Any]]) -> Any:
        """A fresh parser (an instance keeps streaming state); newer vLLM releases also take the request's tools."""
        if "tools" in inspect.signature(self._class).parameters:
            return self._class(self._tokenizer, tools=list(tools))
        return self._class(self._tokenizer)

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn:
        if "<tool_call>" not in text:
            return self._ours.parse(text, tools)
        request = self._request(model="kopa", messages=[{"role": "user", "content": ""}], tools=list(tools) or None)
        info = self._make(tools).extract_tool_calls(text, request)
        calls = []
        for item in info.tool_calls if info.tools_called else ():
            try:
                arguments = json.loads(item.function.arguments or "{}")
            except ValueError:
                arguments = None
            if isinstance(arguments, dict):
                calls.append(ToolCall(item.function.name, scrub_surrogates(arguments)))
        if calls:
            return AssistantTurn(content=(info.content or "").rstrip(), calls=tuple(calls), raw=text)
        # vLLM found no readable call in text that has one: say why, as our reader would
        ours = self._ours.parse(text, tools)
        problems = ours.problems or (f"the tool call could not be read; {QWEN3_CODER.hint}",)
        return AssistantTurn(content=ours.content, problems=problems, raw=text)
