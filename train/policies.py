"""Scripted policies: conversation -> next assistant message, without a model (CPU checks, dataset audits).

    rollout = await run_rollout(task, GoldenPolicy(task), gateway)     # must pass, as the bench oracle does

``GoldenPolicy`` plays the task's golden trajectory one step per assistant turn, the calls of a step together,
written as qwen3_coder text (``models.toolcalls.render_assistant``) so that the reader is part of what runs.
Like a model it reads the values it needs (API key tokens, the date) from the ``<RUNTIME_CONTEXT>`` block of the
system prompt, and then answers as the bench oracle does (``bench.agents.oracle.format_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bench.agents.base import resolve_placeholders
from bench.agents.oracle import format_answer, golden_steps
from bench.task import Task
from models.toolcalls import ToolCall, render_assistant

__all__ = ["GoldenPolicy", "ScriptedPolicy", "runtime_context_from_prompt"]

_BLOCK = re.compile(r"<RUNTIME_CONTEXT>\n(.*?)\n</RUNTIME_CONTEXT>", re.DOTALL)


def runtime_context_from_prompt(system_prompt: str) -> dict[str, str]:
    """The ``name: value`` lines of the prompt's runtime-context block (``bench.prompt``), as text."""
    match = _BLOCK.search(system_prompt)
    if not match:
        return {}
    pairs = (line.split(": ", 1) for line in match.group(1).splitlines() if ": " in line)
    return {name.strip(): value for name, value in pairs}


class ScriptedPolicy:
    """Says the given assistant texts in order (then nothing more: an empty final message)."""

    def __init__(self, replies: Sequence[str]):
        self.replies = list(replies)
        self.seen: list[list[Mapping[str, Any]]] = []  # the conversation at each turn

    async def __call__(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
        self.seen.append(list(messages))
        return self.replies.pop(0) if self.replies else ""


class GoldenPolicy:
    """The golden trajectory of ``task``, step by step, then its golden answer (module doc)."""

    def __init__(self, task: Task):
        self.task = task
        self.steps = list(golden_steps(task))
        self.turn = 0

    def _context(self, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        context: dict[str, Any] = runtime_context_from_prompt(str(messages[0].get("content", "")))
        context.update({k: v for k, v in self.task.system_state.predefined.items() if k in context})  # typed values
        return context

    async def __call__(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
        turn, self.turn = self.turn, self.turn + 1
        if turn >= len(self.steps):
            return format_answer(self.task)
        context = self._context(messages)
        calls = [ToolCall(a.tool, resolve_placeholders(a.args, context)) for a in self.steps[turn]]
        return render_assistant("", calls)
