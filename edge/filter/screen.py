"""The filter's rule stages as a screen, run on each item as synthesis makes it.

    screen = Screen(catalog=catalog, audit=ContaminationAudit(bench_tasks))
    rejection = screen(item)        # None: the item will pass answerability, quality's rules and the audit

Synthesis fills its Table 12 quotas with items that pass the screen, so that the filtered dataset has the size
and mix asked for. The screen gives the funnel's verdicts because it runs the same checks in the same order on
items met in id order (the funnel's order): answerability, the quality rules (the user-voice ones included),
near-duplicates among earlier items that passed the rules, then the n-gram contamination audit. Two checks of the funnel are not here: stage 1
(validity), which replays the committed bundle (synthesis made each call twice already), and the LLM judge
and MiniLM embeddings, when configured, which run at filter time only; items they refuse are missing from the
quotas.
"""

from __future__ import annotations

from typing import Any

from bench.taskset.audit import catalog_identifiers  # the catalog's ASCII names, as quality's rules see them
from edge.synth.item import Rejection, SynthItem

from .answerability import check_answerability
from .contamination import ContaminationAudit
from .ngrams import TRIGRAMS, NgramIndex, char_ngrams
from .quality import DUPLICATE_JACCARD, rule_problem
from .user_voice import user_voice_problem

__all__ = ["Screen"]


class Screen:
    """Call with items in id order; it keeps the near-duplicate index of what it passed through the rules."""

    def __init__(self, *, catalog: Any = None, audit: ContaminationAudit | None = None,
                 threshold: float = DUPLICATE_JACCARD):
        self.catalog, self.audit, self.threshold = catalog, audit, threshold
        self.identifiers = frozenset(catalog_identifiers(catalog)) if catalog is not None else frozenset()
        self.index = NgramIndex(analyzer=TRIGRAMS, threshold=threshold)

    def __call__(self, item: SynthItem) -> Rejection | None:
        if (rejection := check_answerability(item, self.catalog)) is not None:
            return rejection
        if problem := rule_problem(item.task.query, self.identifiers) or user_voice_problem(item, self.catalog):
            return Rejection(item_id=item.task.id, stage="quality", reason=problem)
        grams = char_ngrams(item.task.query)
        if (hit := self.index.best(grams)) is not None:
            return self._duplicate(item.task.id, hit)
        self.index.add(item.task.id, grams)
        return self.audit.rejection(item) if self.audit is not None else None

    def duplicate(self, item_id: str, query: str) -> Rejection | None:
        """The near-duplicate verdict on a query alone, indexing nothing: synthesis asks it before it records an
        item's calls. The verdict is the one ``__call__`` would give, should the item pass the checks before it."""
        hit = self.index.best(char_ngrams(query))
        return None if hit is None else self._duplicate(item_id, hit)

    def _duplicate(self, item_id: str, hit: tuple[str, float]) -> Rejection:
        return Rejection(item_id=item_id, stage="quality", reason=(
            f"near-duplicate of {hit[0]} (character-trigram Jaccard {hit[1]:.2f} ≥ {self.threshold})"))
