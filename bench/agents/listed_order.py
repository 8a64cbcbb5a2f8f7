"""``listed-order``: what following the order of the tool list alone earns.

    outcome = await run_episode(task, ListedOrderAgent(), gateway, seed=0)
    outcome.action.corr   # about what a random pick of tools gets; 1.0 if the list were golden-first again

Why it exists: a task file lists its golden tools first, in the order the golden trajectory calls them
(``bench.tool_order``). Shown in that order, the list is the answer key, and a model (or a training set) could
score by calling the listed tools one after another. Episodes now show a seeded shuffle; this baseline measures
what is left of the shortcut. It walks the tools in the order the episode presents them and makes N calls, one
per turn, N being the number of golden actions: a tool the golden trajectory uses gets its golden calls (the
golden arguments, placeholders resolved as the oracle resolves them, one call per golden call of that tool, up
to N in all), any other tool one call with no arguments. Under the old golden-first order that reproduces the
golden calls exactly (Corr = 1); under the shuffle the golden tools land anywhere in the list and its Corr falls
to what the same walk over a uniformly random order gets (``planned_calls`` over random orders gives that
expectation; ``tests/bench/test_listed_order.py`` holds the agent to it, so the test fails if the leak returns).

It borrows the golden arguments on purpose: the figure then isolates the order, not argument filling. It answers
like ``first-page`` with what it has: the number of records its calls returned (``\\boxed{n}`` for a number
task, ``ANSWER: {n건}`` otherwise, a plain note for a task scored on its final state).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.task import Task

from .base import EpisodeContext, resolve_placeholders
from .oracle import count_answer

__all__ = ["ListedOrderAgent", "planned_calls"]


def planned_calls(task: Task, order: Sequence[str], runtime_context: dict[str, Any] | None = None,
                  ) -> list[tuple[str, dict[str, Any]]]:
    """The (tool, arguments) calls the agent makes when shown ``task``'s tools in ``order`` (module doc).

    With ``runtime_context`` None the golden arguments keep their placeholders (enough to count golden calls).
    """
    golden: dict[str, list[dict[str, Any]]] = {}
    for action in task.golden_actions:
        args = dict(action.args) if runtime_context is None else resolve_placeholders(action.args, runtime_context)
        golden.setdefault(action.tool, []).append(args)
    budget = len(task.golden_actions)
    calls: list[tuple[str, dict[str, Any]]] = []
    for tool in order:
        calls += [(tool, args) for args in golden.get(tool, [{}])][:budget - len(calls)]
        if len(calls) == budget:
            break
    return calls


class ListedOrderAgent:
    """N calls down the presented tool list: golden arguments for golden tools, none for the rest (module doc)."""

    name = "listed-order"

    async def run(self, context: EpisodeContext) -> str | None:
        order = [t.name for t in context.tools]
        seen = 0
        for tool, args in planned_calls(context.task, order, dict(context.runtime_context)):
            result = await context.call(tool, args)
            seen += 0 if result.is_error else len(result.records)
        return count_answer(context.task, f"목록 순서대로 도구를 호출해 {seen}건을 확인했습니다. ", seen)
