"""OpenAI chat messages made ready for a chat template: tool-call arguments as typed objects.

    messages = template_messages(row["messages"], row["tools"])
    tokenizer.apply_chat_template(messages, tools=row["tools"])

In OpenAI chat messages an assistant's ``tool_calls[*].function.arguments`` is a JSON string; chat templates (Qwen3's
and Qwen3.5's ``qwen3_coder`` among them) iterate over it as an object (``arguments|items``). ``template_messages``
reads each one as the readers do (``models.toolcalls.arguments.read_arguments``: JSON with ``strict=False``, values
typed by the tool's JSON Schema with the one rule of ``models.toolcalls.values``), so that training data, rollouts
and the bench render a call the same way: an ``integer`` parameter given ``"3"`` is written ``3``. Arguments that
are not one JSON object (bad JSON, a list, a number, none) become ``{}``: a template cannot write anything else.
Arguments that are an object already are typed the same way. Nothing else changes, and the input is not mutated.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .arguments import read_arguments
from .values import parameter_types, type_arguments

__all__ = ["template_messages"]


def template_messages(messages: Sequence[Mapping[str, Any]],
                      tools: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """A deep copy of ``messages`` with every assistant tool call's arguments a typed object (module doc).

    Args:
        messages: OpenAI chat messages (``role``, ``content``, an assistant's ``tool_calls``).
        tools: OpenAI ``tools`` entries; their parameter schemas type the argument values.

    Returns:
        New message dicts; the input is left as it was.
    """
    types = parameter_types(tools)
    out = [copy.deepcopy(dict(message)) for message in messages]
    for message in out:
        calls = message.get("tool_calls")
        if message.get("role") != "assistant" or not isinstance(calls, list):
            continue
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name = function.get("name")
            declared = types.get(name, {}) if isinstance(name, str) else {}
            raw = function.get("arguments")
            if isinstance(raw, Mapping):
                function["arguments"] = type_arguments(raw, declared)
                continue
            value, _problem = read_arguments(raw if isinstance(raw, str) else None, declared)
            function["arguments"] = value if isinstance(value, dict) else {}
    return out
