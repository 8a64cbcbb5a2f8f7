"""The hermes tool-call format (Qwen2.5-style chat templates): JSON inside ``<tool_call>``, read and rendered.

The format (what a Qwen2.5-style template teaches; vLLM's and verl's ``hermes`` parsers read it)::

    <tool_call>
    {"name": "NAME", "arguments": {"P": V}}
    </tool_call>

``arguments`` may be missing or null (no arguments), an object, or a JSON string of one; its values are typed
as structured arguments are (``models.toolcalls.arguments``). A block whose JSON does not parse, or that is not
an object with a tool ``name``, is a problem naming the fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .arguments import read_arguments
from .qwen3_coder import IDENTIFIER
from .turn import ToolCall
from .values import ParameterTypes

__all__ = ["HINT", "NAME", "claims", "read_block", "render_calls"]

NAME = "hermes"
HINT = 'write each call as <tool_call>\\n{"name": NAME, "arguments": {"P": VALUE}}\\n</tool_call>'


def claims(block: str) -> bool:
    """Whether a ``<tool_call>`` block is written in this format (it opens with ``{``)."""
    return block.lstrip().startswith("{")


def read_block(block: str, types: Mapping[str, ParameterTypes]) -> tuple[ToolCall | None, str]:
    """The call in one ``<tool_call>`` block's inside, or (None, what is wrong with it)."""
    if not claims(block):
        if block.lstrip().startswith("<function="):
            return None, "it holds <function=...> XML, not a JSON object"
        return None, "no JSON object inside <tool_call>"
    try:
        value = json.loads(block, strict=False)
    except json.JSONDecodeError as exc:
        return None, f"its JSON does not parse ({exc})"
    if not isinstance(value, dict):
        return None, "its JSON is not one object with name and arguments"
    name = value.get("name")
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name.strip()):
        return None, f"{str(name)[:60]!r} is not a tool name" if name is not None else "the object has no name"
    name = name.strip()
    raw = value.get("arguments")
    if raw is not None and not isinstance(raw, (dict, str)):
        return None, f"the arguments of {name} are {type(raw).__name__}, not one JSON object"
    arguments, problem = read_arguments(raw, types.get(name, {}))
    return ToolCall(name, arguments, problem=problem), ""


def render_calls(calls: Sequence[ToolCall]) -> str:
    """``calls`` in this format, one ``<tool_call>`` block each (the Qwen2.5 chat template's layout)."""
    return "\n".join("<tool_call>\n" + json.dumps({"name": call.name, "arguments": dict(call.arguments) if isinstance(
        call.arguments, Mapping) else {}}, ensure_ascii=False) + "\n</tool_call>" for call in calls)
