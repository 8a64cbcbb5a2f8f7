"""The qwen3_coder XML tool-call format (Qwen3.5): one ``<tool_call>`` block read into a call, and calls rendered.

The format (``vllm serve --tool-call-parser qwen3_coder``; verl's ``multi_turn.format=qwen3_coder``)::

    <tool_call>
    <function=NAME>
    <parameter=P>
    V
    </parameter>
    </function>
    </tool_call>

One leading and one trailing newline of each value are dropped; the value is then typed by the parameter's
declared type (``models.toolcalls.values``; ``"null"`` is None). The reading is strict about structure: a block
that is not one ``<function=NAME>`` of well-formed ``<parameter=P>`` elements is a problem naming the fault,
never a call guessed at or a gap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .turn import ToolCall
from .values import ParameterTypes, read_value

__all__ = ["HINT", "NAME", "claims", "read_block", "render_calls"]

NAME = "qwen3_coder"
HINT = ("write each call as <tool_call>\\n<function=NAME>\\n<parameter=P>\\nVALUE\\n</parameter>\\n"
        "</function>\\n</tool_call>")

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_FUNCTION = re.compile(r"^\s*<function=([^>\n]*)>(.*?)</function>\s*$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>", re.DOTALL)


def claims(block: str) -> bool:
    """Whether a ``<tool_call>`` block is written in this format (it opens with ``<function=``)."""
    return block.lstrip().startswith("<function=")


def _strip_newlines(value: str) -> str:
    value = value[1:] if value.startswith("\n") else value
    return value[:-1] if value.endswith("\n") else value


def read_block(block: str, types: Mapping[str, ParameterTypes]) -> tuple[ToolCall | None, str]:
    """The call in one ``<tool_call>`` block's inside, or (None, what is wrong with it)."""
    match = _FUNCTION.match(block)
    if match is None:
        if block.lstrip().startswith("{"):
            return None, "it holds JSON, not <function=NAME> with <parameter=...> elements"
        if "<function=" not in block:
            return None, "no <function=NAME> inside <tool_call>"
        return None, "<function=...> is not closed by </function>"
    name, body = match.group(1).strip(), match.group(2)
    if not IDENTIFIER.fullmatch(name):
        return None, f"{name[:60]!r} is not a tool name"
    declared = types.get(name, {})
    args: dict[str, Any] = {}
    for pname, value in _PARAMETER.findall(body):
        pname = pname.strip()
        if not IDENTIFIER.fullmatch(pname):
            return None, f"{pname[:60]!r} is not a parameter name (in {name})"
        args[pname] = read_value(_strip_newlines(value), declared.get(pname, ()))
    rest = _PARAMETER.sub("", body)
    if rest.strip():
        what = "an unclosed <parameter=...>" if "<parameter=" in rest else f"stray text {rest.strip()[:60]!r}"
        return None, f"{what} inside <function={name}>"
    return ToolCall(name, args), ""


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


def render_calls(calls: Sequence[ToolCall]) -> str:
    """``calls`` in this format, one ``<tool_call>`` block each (the Qwen3.5 chat template's layout)."""
    blocks = []
    for call in calls:
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        params = "".join(f"<parameter={k}>\n{_value_text(v)}\n</parameter>\n" for k, v in args.items())
        blocks.append(f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>")
    return "\n".join(blocks)
