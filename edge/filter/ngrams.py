"""The filters' character trigrams, on the shared n-gram analyser and index (``public_apis.ngrams``).

    grams = char_ngrams("서울 버스 노선")                 # whitespace-normalised character trigrams
    index = NgramIndex(analyzer=TRIGRAMS, threshold=0.8)
    index.best(grams)                                   # (key, jaccard) of the most similar entry ≥ threshold, or None
    index.add("item-1", grams)

A query is one unit (its whitespace collapsed, case kept), cut into trigrams across word boundaries; a query of
three characters or fewer is its own single feature. ``bench.taskset.audit`` compares queries pairwise with
difflib, which is fine for 145 tasks but quadratic in Python for thousands; the shared index's ``best`` finds
every entry at or above the threshold exactly by prefix filtering, checking only the candidates that share a
prefix n-gram.
"""

from __future__ import annotations

from functools import cache

from public_apis.ngrams import Analyzer, NgramIndex, jaccard
from public_apis.ngrams import collapse_spaces as normalize

__all__ = ["TRIGRAMS", "NgramIndex", "char_ngrams", "jaccard", "normalize"]

N = 3
TRIGRAMS = Analyzer(sizes=(N,), keep_short=True)


@cache
def _analyzer(n: int) -> Analyzer:
    return TRIGRAMS if n == N else Analyzer(sizes=(n,), keep_short=True)


def char_ngrams(text: str, n: int = N) -> frozenset[str]:
    return _analyzer(n).gram_set(text)
