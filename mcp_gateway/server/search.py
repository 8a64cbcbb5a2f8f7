"""Ranked tool retrieval over Korean descriptions: character 2-3-gram TF-IDF, cosine, pure numpy.

Word-level retrieval (FastMCP's BM25, English tokenizers) drops Hangul or treats every
inflected form as a new word; character n-grams match "전환사채 발행 결정" against
"전환사채발행결정" and against particles glued to nouns. The corpus is at most a few thousand
short documents, so an inverted index with exact scoring beats any approximate structure.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script; '_' splits snake_case names
NGRAM_SIZES = (2, 3)


def ngrams(text: str) -> Counter[str]:
    """Character n-grams of each word, padded so word starts and ends count as features."""
    grams: Counter[str] = Counter()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        padded = f" {word} "
        for n in NGRAM_SIZES:
            grams.update(padded[i:i + n] for i in range(len(padded) - n + 1))
    return grams


class NgramIndex:
    """TF-IDF (sublinear tf, smoothed idf, L2-normalised) over documents; ``search`` returns cosine ranks."""

    def __init__(self, documents: Sequence[str]) -> None:
        counts = [ngrams(doc) for doc in documents]
        df: Counter[str] = Counter(g for c in counts for g in c)
        n_docs = len(documents)
        self._idf = {g: math.log((1 + n_docs) / (1 + d)) + 1.0 for g, d in df.items()}
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for doc_id, c in enumerate(counts):
            weights = self._weights(c)
            for gram, w in weights.items():
                ids, ws = postings.setdefault(gram, ([], []))
                ids.append(doc_id)
                ws.append(w)
        self._postings = {g: (np.asarray(ids, dtype=np.int32), np.asarray(ws, dtype=np.float32))
                          for g, (ids, ws) in postings.items()}
        self._n_docs = n_docs

    def _weights(self, grams: Counter[str]) -> dict[str, float]:
        raw = {g: (1.0 + math.log(tf)) * self._idf[g] for g, tf in grams.items() if g in self._idf}
        norm = math.sqrt(sum(w * w for w in raw.values())) or 1.0
        return {g: w / norm for g, w in raw.items()}

    def search(self, query: str, limit: int = 10) -> list[tuple[int, float]]:
        """Up to ``limit`` (document index, cosine score) pairs with a positive score, best first."""
        scores = np.zeros(self._n_docs, dtype=np.float32)
        for gram, qw in self._weights(ngrams(query)).items():
            ids, ws = self._postings[gram]
            scores[ids] += qw * ws
        hits = np.flatnonzero(scores > 0)
        order = hits[np.lexsort((hits, -scores[hits]))][:limit]  # ties: catalog order
        return [(int(i), float(scores[i])) for i in order]
