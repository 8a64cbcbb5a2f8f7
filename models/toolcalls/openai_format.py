"""An OpenAI chat-completion assistant message read: its structured ``tool_calls``, else the calls in its text.

    turn = read_message(completion["choices"][0]["message"], tools)
    [(c.id, c.name, c.arguments, c.problem) for c in turn.calls], turn.problems

A message with structured ``tool_calls`` (a server started with a tool-call parser, llama.cpp's grammar) is
read from them: each item's ``function.name`` and ``function.arguments`` (``models.toolcalls.arguments``: JSON
text typed by the schema; text that is not JSON is kept, with ``problem`` saying so), its ``id`` when it has one.
An item of the wrong shape is still a call (name ``""``, no arguments): the runtime refuses it and the model is
told. The content is kept as it is. Without structured calls the content is read as text by ``reader``
(``models.toolcalls.text``; by default every text format), so a reply means the same thing whichever way the
server returned it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_gateway.text import scrub_surrogates

from .arguments import read_arguments
from .text import ToolCallParser, read_text
from .turn import AssistantTurn, ToolCall
from .values import ParameterTypes, parameter_types

__all__ = ["read_message", "read_structured_call"]


def read_structured_call(item: Any, types: Mapping[str, ParameterTypes]) -> ToolCall:
    """One entry of a message's ``tool_calls`` (``{"id", "type": "function", "function": {"name", "arguments"}}``)."""
    function = item.get("function") if isinstance(item, Mapping) else None
    function = function if isinstance(function, Mapping) else {}
    name = function.get("name")
    name = scrub_surrogates(name) if isinstance(name, str) else ""
    call_id = item.get("id") if isinstance(item, Mapping) else None
    raw = function.get("arguments")
    arguments, problem = read_arguments(raw, types.get(name, {}))
    return ToolCall(name, arguments, id=call_id if isinstance(call_id, str) and call_id else None, problem=problem,
                    raw=raw)


def read_message(message: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] = (),
                 reader: ToolCallParser | None = None) -> AssistantTurn:
    """The content and calls of an assistant ``message`` (module doc); ``tools`` give the parameter types."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    items = message.get("tool_calls")
    if isinstance(items, list) and items:  # JSON: a list (anything else is no structured calls)
        types = parameter_types(tools)
        return AssistantTurn(content=scrub_surrogates(text), calls=tuple(read_structured_call(i, types) for i in items),
                             raw=text)
    return reader.parse(text, tools) if reader is not None else read_text(text, tools)
