"""The system prompt of an episode (paper Table 24): base instruction, runtime context, answer format.

    from bench.prompt import build_system_prompt
    prompt = build_system_prompt("number", {"current_date": "2026-01-30", "dart_api_key": "kopa-dart-…"})

Three parts, in this order:

* the **base instruction** — always;
* the **runtime-context block** — only when the task defines a system state: every predefined value and
  every result of a system-state action (e.g. the episode's API key token), one ``name: value`` line
  each, between ``<RUNTIME_CONTEXT>`` tags, in the order ``SystemState.names()`` gives;
* the **response-format suffix** chosen by the task's response type: ``string`` and ``judge`` end with
  ``ANSWER: {…}`` (judge asks for a complete, explicit answer inside the braces), ``number`` with
  ``\\boxed{…}``; a task without RESPONSE in its reward basis (ENVIRONMENT only) gets no suffix.

The wording is our own, in English: the paper's agents were prompted in English (Table 24), so English
keeps the scores comparable, and small models follow English instructions more reliably. The query and
the tool descriptions stay Korean; the prompt asks for the answer in the language of the question.
The markers (``ANSWER:``, ``\\boxed``) are exactly what ``bench.scoring.response`` extracts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.task import ResponseType

__all__ = ["BASE_INSTRUCTION", "RESPONSE_FORMATS", "build_system_prompt", "runtime_context_block"]

BASE_INSTRUCTION = (
    "You are an agent that solves the user's request by calling tools. Work out which tools you need, "
    "call them with correct arguments, pass the values one call returns into the next, and keep the "
    "number of calls small. When a result is split into pages, check total_count and fetch the further "
    "pages you need before you answer. Answer in the language of the question."
)

_CONTEXT_INTRO = ("The values below are set for this session. Use them where a tool call needs them "
                  "(an API key goes into the KEY argument exactly as written).")

RESPONSE_FORMATS: dict[ResponseType, str] = {
    ResponseType.STRING: (
        "Finish your reply with the final answer written as ANSWER: {your answer}. Put the answer inside "
        "the braces and nowhere else after it."),
    ResponseType.NUMBER: (
        "Give the final answer as a single number or arithmetic expression inside \\boxed{}, for example "
        "\\boxed{1234.5} or \\boxed{100*(1680-532)/532}. Write only the value in the box: no units, "
        "no words."),
    ResponseType.JUDGE: (
        "Finish your reply with the final answer written as ANSWER: {your answer}. Inside the braces give "
        "a complete and explicit answer that covers every part of the question."),
}


def _line(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    return f"{name}: {' '.join(text.split())}"  # one line per key, whatever the value holds


def runtime_context_block(context: Mapping[str, Any]) -> str:
    """The ``<RUNTIME_CONTEXT>`` block for ``context``; empty when there is nothing to show."""
    if not context:
        return ""
    lines = [_line(name, value) for name, value in context.items()]
    return "\n".join([_CONTEXT_INTRO, "<RUNTIME_CONTEXT>", *lines, "</RUNTIME_CONTEXT>"])


def build_system_prompt(response_type: ResponseType | str | None, context: Mapping[str, Any] | None = None) -> str:
    """The system prompt for one episode.

    Args:
        response_type: the task's response type; None for a task scored without RESPONSE.
        context: the runtime context, name to value, in display order (predefined values, then the
            bound results of system-state actions).

    Raises:
        ValueError: ``response_type`` is not string, number or judge.
    """
    parts = [BASE_INSTRUCTION]
    block = runtime_context_block(context or {})
    if block:
        parts.append(block)
    if response_type is not None:
        try:
            kind = ResponseType(response_type)
        except ValueError:
            raise ValueError(f"unknown response type {response_type!r}; use one of "
                             f"{', '.join(t.value for t in ResponseType)}") from None
        parts.append(RESPONSE_FORMATS[kind])
    return "\n\n".join(parts)
