"""verl's own ``qwen3_coder`` parser (``Qwen3XMLToolParser``) behind the reader interface, for the parity check.

    turn = VerlQwen3CoderParser().parse(text, tools)       # where verl imports (the dev venv: --no-deps)

The training rollouts read generations with our reader (``train.engines.verl.agent_loop``), not with this: one typing rule
everywhere. ``tests/models/test_parity.py`` holds ours to it on the well-formed replies and lists, with the
reason, the replies where verl's typing differs from our rule. verl is driven as its agent loop drives it:
``_get_function_calls`` splits the text, ``_parse_xml_function_call`` reads each function against
``verl.tools.schemas.OpenAIFunctionToolSchema`` entries (each parameter given its declared type, as ours reads
it: verl's schema holds one type name per parameter).
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from .turn import AssistantTurn, ToolCall
from .values import parameter_types

__all__ = ["VERL_PARSER", "VerlQwen3CoderParser"]

VERL_PARSER = "verl.qwen3_coder"


@functools.cache
def _verl() -> tuple[Any, Any]:
    with warnings.catch_warnings():  # ray warns of its own deprecations on import; not ours to fix
        warnings.simplefilter("ignore", DeprecationWarning)
        from verl.experimental.agent_loop.tool_parser import Qwen3XMLToolParser
        from verl.tools.schemas import OpenAIFunctionToolSchema
    return Qwen3XMLToolParser, OpenAIFunctionToolSchema


class VerlQwen3CoderParser:
    """verl's ``Qwen3XMLToolParser`` (module doc): calls it cannot read are dropped, as verl drops them."""

    name = VERL_PARSER

    def __init__(self) -> None:
        """
        Raises:
            ImportError: verl (or its imports: torch, ray) is not importable.
        """
        parser_class, self._schema = _verl()
        self._parser = parser_class(tokenizer=None)  # the tokenizer only decodes ids; we hand it text

    def _schemas(self, tools: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [self._schema.model_validate({"type": "function", "function": {
            "name": name, "description": "", "parameters": {
                "type": "object", "properties": {k: {"type": t[0] if t else "string"} for k, t in types.items()},
                "required": []}}}) for name, types in parameter_types(tools).items()]

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn:
        if "<tool_call>" not in text:  # as verl's extract_tool_calls: no calls, the text is the content
            return AssistantTurn(content=text, raw=text)
        schemas = self._schemas(tools)
        calls = []
        for raw in self._parser._get_function_calls(text):
            parsed = self._parser._parse_xml_function_call(raw, schemas)
            if parsed is not None:
                calls.append(ToolCall(parsed.name, json.loads(parsed.arguments)))
        return AssistantTurn(content=text[:text.find("<tool_call>")], calls=tuple(calls), raw=text)
