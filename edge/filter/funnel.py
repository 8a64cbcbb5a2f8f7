"""The filter funnel: stage 1 (execution validity), 2 (answerability), 3 (quality), then the contamination audit.

    result = await run_funnel(items, validity=check_validity, catalog=catalog, audit=ContaminationAudit(bench))
    result.kept, result.rejections, result.counts      # counts: per stage, items in / rejected / out
    result.reasons                                     # per stage, rejections by kind of reason

Stage 1 is whatever callable is passed (``edge.synth.validity``'s: an async function taking an item and
returning a ``Rejection`` or None; a plain function works too); None skips it. Every rejection keeps its reason,
and an item rejected at one stage is not shown to the next, so the counts add up: each stage's ``out`` is the
next stage's ``in``, and ``in`` of the first minus ``out`` of the last is the number of rejections. ``reasons``
counts each stage's rejections by kind (the reason without the values and ids it names, ``reason_kind``): the
quality stage's user-voice defects (``edge.filter.user_voice``) each have their own.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edge.synth.item import Rejection, SynthItem

from .answerability import check_answerability
from .contamination import ContaminationAudit
from .quality import QualityJudge, check_quality_async

__all__ = ["STAGES", "FunnelResult", "reason_kind", "run_funnel"]

STAGES = ("validity", "answerability", "quality", "contamination")
Validity = Callable[[SynthItem], "Awaitable[Rejection | None] | Rejection | None"]


@dataclass
class FunnelResult:
    kept: list[SynthItem]
    rejections: list[Rejection]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> {"in", "rejected", "out"}
    judge_stats: dict[str, int] = field(default_factory=dict)

    @property
    def reasons(self) -> dict[str, dict[str, int]]:
        """Stage → kind of reason → rejections, most frequent first."""
        out: dict[str, Counter[str]] = {}
        for r in self.rejections:
            out.setdefault(r.stage, Counter())[reason_kind(r.reason)] += 1
        return {stage: dict(c.most_common()) for stage, c in out.items()}

    def table(self) -> str:
        lines = [f"{'stage':<14} {'in':>7} {'rejected':>9} {'out':>7}"]
        lines += [f"{stage:<14} {c['in']:>7} {c['rejected']:>9} {c['out']:>7}" for stage, c in self.counts.items()]
        return "\n".join(lines)


def reason_kind(reason: str) -> str:
    """A rejection reason without the values and ids it names (for counting by kind)."""
    return reason.split(" (")[0].split(" of ")[0][:80]


async def _validity(items: Sequence[SynthItem], check: Validity) -> tuple[list[SynthItem], list[Rejection]]:
    kept, rejections = [], []
    for item in items:
        outcome: Any = check(item)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome is None:
            kept.append(item)
        elif isinstance(outcome, Rejection):
            rejections.append(outcome)
        else:
            raise TypeError(f"the validity check returned {type(outcome).__name__} for {item.task.id}; "
                            "expected a Rejection or None")
    return kept, rejections


async def run_funnel(items: Sequence[SynthItem], *, validity: Validity | None = None, catalog: Any = None,
                     judge: QualityJudge | None = None, audit: ContaminationAudit | None = None) -> FunnelResult:
    """Run the stages in order over ``items``; a stage given as None (validity, audit) passes everything."""
    result = FunnelResult(kept=list(items), rejections=[])

    def record(stage: str, kept: list[SynthItem], rejected: list[Rejection]) -> None:
        result.counts[stage] = {"in": len(result.kept), "rejected": len(rejected), "out": len(kept)}
        result.kept = kept
        result.rejections += rejected

    if validity is not None:
        record("validity", *await _validity(result.kept, validity))
    else:
        record("validity", result.kept, [])
    kept: list[SynthItem] = []
    rejected: list[Rejection] = []
    for item in result.kept:
        if (rejection := check_answerability(item, catalog)) is None:
            kept.append(item)
        else:
            rejected.append(rejection)
    record("answerability", kept, rejected)
    quality = await check_quality_async(result.kept, catalog=catalog, judge=judge)
    result.judge_stats = quality.judge_stats
    record("quality", quality.kept, quality.rejections)
    record("contamination", *(audit.filter(result.kept) if audit is not None else (result.kept, [])))
    return result
