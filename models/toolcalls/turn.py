"""What a reader makes of one assistant message: its text, the calls it makes, and what could not be read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["INVALID_CALL", "AssistantTurn", "ToolCall"]

INVALID_CALL = "invalid_tool_call"
"""The tool name an unreadable call is answered under: chat templates can render it, and the model sees its
attempt answered with what was wrong (the call itself is not run)."""


@dataclass(frozen=True)
class ToolCall:
    """One call: the tool's name and its arguments, typed by the tool's JSON Schema (``models.toolcalls.values``).

    ``arguments`` is a dict when they were read; when a structured call's arguments were not JSON it is their
    raw text, and ``problem`` says so: the call is still passed on (the gateway runtime refuses a non-object as
    ``schema_mismatch`` and ACTION counts the attempt), and the model is told ``problem``.
    """

    name: str
    arguments: Any
    id: str | None = None  # the server's id of a structured call; None for calls read from text
    problem: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)  # a structured call's ``arguments`` as sent


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant message read: the text before the calls, the calls in the order they were written, and a
    ``problems`` entry for each call that could not be read at all (naming the fault and the right format)."""

    content: str
    calls: tuple[ToolCall, ...] = ()
    problems: tuple[str, ...] = ()
    raw: str = field(default="", compare=False, repr=False)  # the whole text as generated
