"""Calls a model wrote into its reply's text, in ``<tool_call>`` blocks: read them, or render calls so.

    turn = read_text(text, tools)                 # both text formats, told apart block by block
    turn = choose_parser("qwen3_coder").parse(text, tools)       # one format only: the other one is a problem
    text = render_assistant("확인합니다.", [ToolCall("get_x", {"KEY": "kopa-…"})])   # qwen3_coder by default

A reply's text is its content up to the first ``<tool_call>`` (trailing whitespace dropped), then one block per
``<tool_call>``, each up to its ``</tool_call>`` (the last one may lack it: generation stopped at the stop
token). Text between and after the blocks is not part of the content. A block opening with ``<function=`` is
qwen3_coder XML (``models.toolcalls.qwen3_coder``), one opening with ``{`` is hermes JSON
(``models.toolcalls.hermes``); a block that cannot be read is a ``problems`` entry naming the fault and the right
format, and the calls beside it are still read. Without ``<tool_call>`` the text is the answer, unless it holds
``</tool_call>`` or ``<function=``: then that is a problem too (a call was meant but not written as one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_gateway.text import scrub_surrogates

from . import hermes, qwen3_coder
from .turn import AssistantTurn, ToolCall
from .values import ParameterTypes, parameter_types

__all__ = ["FORMATS", "HERMES", "QWEN3_CODER", "TextFormat", "TextReader", "ToolCallParser", "choose_parser",
           "read_text", "render_assistant"]

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


@dataclass(frozen=True)
class TextFormat:
    """One way of writing calls inside ``<tool_call>`` blocks."""

    name: str
    hint: str  # how a call is written, told to a model whose call could not be read
    claims: Callable[[str], bool]  # whether a block is written in this format
    read_block: Callable[[str, Mapping[str, ParameterTypes]], tuple[ToolCall | None, str]]
    render_calls: Callable[[Sequence[ToolCall]], str]


QWEN3_CODER = TextFormat(qwen3_coder.NAME, qwen3_coder.HINT, qwen3_coder.claims, qwen3_coder.read_block,
                         qwen3_coder.render_calls)
HERMES = TextFormat(hermes.NAME, hermes.HINT, hermes.claims, hermes.read_block, hermes.render_calls)
FORMATS = {f.name: f for f in (QWEN3_CODER, HERMES)}


class ToolCallParser(Protocol):
    """What reads the calls in a reply's text (the agent endpoint takes one; ``name`` is reported)."""

    name: str

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn: ...


class TextReader:
    """Reads ``<tool_call>`` blocks in the given formats (module doc); ``parse`` never raises."""

    def __init__(self, formats: Sequence[TextFormat] = (QWEN3_CODER, HERMES)) -> None:
        self.formats = tuple(formats)
        self.name = "kopa." + "+".join(f.name for f in self.formats)
        self._hint = " or ".join(f.hint for f in self.formats)

    def parse(self, text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn:
        """The content, calls and problems of ``text``; ``tools`` (OpenAI ``tools`` entries) give the types."""
        raw, text = text, scrub_surrogates(text)
        start = text.find("<tool_call>")
        if start == -1:
            if "</tool_call>" in text or "<function=" in text:
                return AssistantTurn(content=text, problems=(
                    f"the reply has a tool call without <tool_call>; {self._hint}",), raw=raw)
            return AssistantTurn(content=text, raw=raw)
        types = parameter_types(tools)
        calls: list[ToolCall] = []
        problems: list[str] = []
        for i, block in enumerate(_BLOCK.findall(text, start)):
            fmt = next((f for f in self.formats if f.claims(block)), None)
            call, problem = (fmt or self.formats[0]).read_block(block, types)
            if call is not None:
                calls.append(call)
            else:
                hint = fmt.hint if fmt is not None else self._hint
                problems.append(f"tool call {i + 1} could not be read: {problem}; {hint}")
        return AssistantTurn(content=text[:start].rstrip(), calls=tuple(calls), problems=tuple(problems), raw=raw)


_READERS = {None: TextReader(), **{name: TextReader([fmt]) for name, fmt in FORMATS.items()}}


def choose_parser(text_format: str | None = None) -> TextReader:
    """The reader of calls written in text: every format (None, the default), or only ``text_format``.

    Raises:
        ValueError: ``text_format`` names no format; the message lists the formats.
    """
    if text_format not in _READERS:
        raise ValueError(f"unknown tool-call text format {text_format!r}; use one of {', '.join(FORMATS)} "
                         "(or none: every format)")
    return _READERS[text_format]


def read_text(text: str, tools: Sequence[Mapping[str, Any]] = ()) -> AssistantTurn:
    """The calls written in ``text``, in either format (module doc)."""
    return _READERS[None].parse(text, tools)


def render_assistant(content: str, calls: Sequence[ToolCall] = (), text_format: str = QWEN3_CODER.name) -> str:
    """A whole assistant message: ``content``, then ``calls`` written in ``text_format``.

    Raises:
        KeyError: ``text_format`` names no format.
    """
    if not calls:
        return content
    return (content + "\n\n" if content else "") + FORMATS[text_format].render_calls(calls)
