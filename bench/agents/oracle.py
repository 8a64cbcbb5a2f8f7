"""``oracle``: replays the golden trajectory and gives the golden answer; it must score 1.0 on every task.

    outcome = await run_episode(task, OracleAgent(), gateway, seed=0)
    assert outcome.passed and outcome.action.action == 1.0   # otherwise the task itself is broken

It runs the golden actions step by step, the calls of one step concurrently (they are annotated as
parallel), with ``{name}`` placeholders filled from the runtime context (``bench.agents.base``), and then
answers with the task's first accepted answer in the format the task asks for: ``ANSWER: {…}`` for string
and judge, ``\\boxed{…}`` for number. Because it scores 1.0 exactly when the task is sound, it validates
tasks: a golden call that fails (a wrong argument, a replay miss), an answer the RESPONSE scorer cannot
read back, or a golden state hash the golden writes do not reach all show up as an oracle below 1.0.
When a golden call fails, the oracle says which and gives no answer, so the failure cannot go unnoticed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from itertools import groupby

from bench.task import GoldenAction, ResponseType, Task
from mcp_gateway.runtime import ToolResult

from .base import EpisodeContext, resolve_placeholders

__all__ = ["OracleAgent", "count_answer", "format_answer"]

_DONE = "요청한 작업을 완료했습니다."  # the reply of a task scored on its final state only


def format_answer(task: Task, answer: str | None = None) -> str:
    """``answer`` (by default the task's first accepted answer) written as the task's response type asks."""
    if task.response_type is None:
        return _DONE
    value = task.accepted_answers[0] if answer is None else answer
    if task.response_type is ResponseType.NUMBER:
        return f"\\boxed{{{value}}}"
    return f"ANSWER: {{{value}}}"


def count_answer(task: Task, note: str, count: int, text: str | None = None) -> str:
    """A partial answer from a count of records seen: ``note``, then the count as the task's response type asks
    (``text`` for a string answer, by default ``"<count>건"``); the note alone for a task answered by its state."""
    if task.response_type is None:
        return note
    if task.response_type is ResponseType.NUMBER:
        return note + format_answer(task, str(count))
    return note + format_answer(task, text or f"{count}건")


def golden_steps(task: Task) -> Iterator[list[GoldenAction]]:
    """The golden actions grouped by step, in step order."""
    for _, actions in groupby(task.golden_actions, key=lambda a: a.step):
        yield list(actions)


class OracleAgent:
    """Executes the golden actions, parallel steps concurrently, and answers with the golden answer."""

    name = "oracle"

    async def run(self, context: EpisodeContext) -> str | None:
        failures: list[str] = []
        for actions in golden_steps(context.task):
            results = await self._step(context, actions)
            failures += [f"{a.tool} (step {a.step}): {r.outcome.value}: {r.message}"
                         for a, r in zip(actions, results, strict=True) if r.is_error]
        if failures:
            return "골든 호출이 실패했습니다: " + " | ".join(failures)
        return format_answer(context.task)

    @staticmethod
    async def _step(context: EpisodeContext, actions: Sequence[GoldenAction]) -> list[ToolResult]:
        calls = [context.call(a.tool, resolve_placeholders(a.args, context.runtime_context)) for a in actions]
        return list(await asyncio.gather(*calls))
