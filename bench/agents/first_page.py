"""``first-page``: the oracle that never asks past the first page, the failure of the paper's Figure 1.

    outcome = await run_episode(task, FirstPageAgent(), gateway, seed=0)
    outcome.passed == (not task.pages)  # for a sound task

It follows the golden trajectory step by step like the oracle, but skips every golden call that asks
for a page past the first (the tool's page argument > 1). Once it has skipped a call it stops: the later
steps consume the records it never fetched, so it cannot issue them, and it answers from what it has —
the number of records it saw (``\\boxed{n}`` for a number task, ``ANSWER: {첫 페이지 n건}`` otherwise).
That partial answer is what a model that stops at page one reports; it does not match a golden answer
that needs the later pages, and the workspace writes of later steps never happen. A trajectory that does
not page is followed to the end and answered like the oracle, so this baseline fails exactly on the
tasks whose golden trajectory pages (``Task.pages``) and passes elsewhere.
"""

from __future__ import annotations

from bench.task import GoldenAction

from .base import EpisodeContext
from .oracle import OracleAgent, count_answer, format_answer, golden_steps

__all__ = ["FirstPageAgent"]


def _past_first_page(context: EpisodeContext, action: GoldenAction) -> bool:
    page_param = context.tool(action.tool).page_no_param
    page = action.args.get(page_param) if page_param else None
    return isinstance(page, int) and not isinstance(page, bool) and page > 1


class FirstPageAgent(OracleAgent):
    """Golden calls up to the first page-2+ request; then a partial answer from what it saw."""

    name = "first-page"

    async def run(self, context: EpisodeContext) -> str | None:
        seen, total = 0, 0
        for actions in golden_steps(context.task):
            kept = [a for a in actions if not _past_first_page(context, a)]
            results = await self._step(context, kept)
            seen += sum(len(r.records) for r in results if not r.is_error)
            total = max([total, *(r.total_count or 0 for r in results)])
            if len(kept) < len(actions):
                return self._partial(context, seen, total)
        return format_answer(context.task)

    @staticmethod
    def _partial(context: EpisodeContext, seen: int, total: int) -> str:
        return count_answer(context.task, f"첫 페이지에서 {seen}건을 확인했습니다(전체 {total}건). ", seen,
                            f"첫 페이지 {seen}건")
