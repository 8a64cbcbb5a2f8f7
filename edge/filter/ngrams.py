"""Character n-grams and an exact Jaccard near-duplicate index, shared by the quality and contamination stages.

    grams = char_ngrams("서울 버스 노선")                 # whitespace-normalised character trigrams
    index = NgramIndex(threshold=0.8)
    index.best(grams)                                   # (key, jaccard) of the most similar entry ≥ threshold, or None
    index.add("item-1", grams)

``bench.taskset.audit`` compares queries pairwise with difflib, which is fine for 145 tasks but quadratic in
Python for thousands; here a prefix filter (rarest n-grams first) finds every pair at or above the threshold
exactly, checking only the candidates that share a prefix n-gram.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Hashable

__all__ = ["NgramIndex", "char_ngrams", "jaccard", "normalize"]

N = 3


def normalize(text: str) -> str:
    """Whitespace collapsed and trimmed: spacing differences do not make two queries different."""
    return re.sub(r"\s+", " ", text).strip()


def char_ngrams(text: str, n: int = N) -> frozenset[str]:
    text = normalize(text)
    if len(text) <= n:
        return frozenset([text]) if text else frozenset()
    return frozenset(text[i:i + n] for i in range(len(text) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NgramIndex:
    """Entries (key, n-gram set); ``best`` returns the most similar entry with Jaccard ≥ ``threshold``.

    Prefix filtering: with the n-grams of a set sorted in one fixed global order, two sets with Jaccard ≥ t share
    at least one of each other's first ``|A| - ceil(t·|A|) + 1`` n-grams. The order is by string (a fixed total
    order suffices for exactness; it need not be by rarity), so the result does not depend on insertion order.
    """

    def __init__(self, threshold: float):
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold {threshold} must be in (0, 1]")
        self.threshold = threshold
        self._sets: dict[Hashable, frozenset[str]] = {}
        self._rank: dict[Hashable, int] = {}  # insertion order: ties go to the entry added first
        self._postings: dict[str, list[Hashable]] = defaultdict(list)

    def _prefix(self, grams: frozenset[str]) -> list[str]:
        size = len(grams) - math.ceil(self.threshold * len(grams)) + 1
        return sorted(grams)[:max(size, 1)]

    def add(self, key: Hashable, grams: frozenset[str]) -> None:
        self._rank.setdefault(key, len(self._rank))
        self._sets[key] = grams
        for g in self._prefix(grams):
            self._postings[g].append(key)

    def __len__(self) -> int:
        return len(self._sets)

    def best(self, grams: frozenset[str]) -> tuple[Hashable, float] | None:
        """The entry most similar to ``grams`` at or above the threshold (ties: the one added first), or None."""
        seen: set[Hashable] = set()
        found: tuple[Hashable, float] | None = None
        candidates: list[Hashable] = []
        for g in self._prefix(grams):
            for key in self._postings.get(g, ()):
                if key not in seen:
                    seen.add(key)
                    candidates.append(key)
        for key in sorted(candidates, key=self._rank.__getitem__):
            score = jaccard(grams, self._sets[key])
            if score >= self.threshold and (found is None or score > found[1]):
                found = (key, score)
        return found
