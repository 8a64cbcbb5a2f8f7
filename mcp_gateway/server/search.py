"""Ranked tool retrieval over Korean descriptions: character 2-3-gram TF-IDF, cosine, on the shared index.

Word-level retrieval (FastMCP's BM25, English tokenizers) drops Hangul or treats every
inflected form as a new word; character n-grams match "전환사채 발행 결정" against
"전환사채발행결정" and against particles glued to nouns. The corpus is at most a few thousand
short documents, so an inverted index with exact scoring beats any approximate structure. The n-grams
and the TF-IDF postings are ``public_apis.ngrams`` (the one analyser and index EDGE uses too); this module
configures them (NFKC, lower case, words of letters and digits, padded 2- and 3-grams, sublinear tf) and adds
the word gate below.

N-grams alone always find something (``xyzzy_nonexistent_tool`` shares ``" to"`` with half the catalog)
and favour substrings (``bus`` in ``business``). So a tool is a hit only when some query word matches one of
its words, and the score is half the n-gram cosine, half how well the query's words match::

    whole word (bus = bus)                                      1.0
    Hangul inside a Hangul word either way (지하철역 / 지하철역을)  0.8   particles and compounds glue on
    a stem the query extends (stations -> station, 4+ letters)   0.8   or that extends the query by an
                                                                      ending of up to 2 (law -> laws)
    any other substring (bus in business)                        0.4
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from public_apis.ngrams import Analyzer, ranked
from public_apis.ngrams import NgramIndex as _SharedIndex

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script; '_' splits snake_case names
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
NGRAM_SIZES = (2, 3)
ANALYZER = Analyzer(sizes=NGRAM_SIZES, word=_WORD, pad=True, nfkc=True, lower=True)
WHOLE, KOREAN, STEM, SUBSTRING = 1.0, 0.8, 0.8, 0.4  # how well one query word matches one document word
MIN_STEM = 4  # a document word a query word extends must be this long (bus is no stem of business)
MAX_ENDING = 2  # a document word may extend a query word (of 3+ letters) by this many: law -> laws, bus -> buses


def words(text: str) -> list[str]:
    """Normalised words: NFKC, lower case, split at anything but letters and digits (and at '_')."""
    return ANALYZER.words(text)


def word_match(query_word: str, doc_word: str) -> float:
    """How well ``query_word`` matches ``doc_word``: WHOLE, KOREAN, STEM, SUBSTRING, or 0.0."""
    if query_word == doc_word:
        return WHOLE
    if _HANGUL.search(query_word) and _HANGUL.search(doc_word) and min(len(query_word), len(doc_word)) >= 2 and (
            query_word in doc_word or doc_word in query_word):
        return KOREAN
    if len(doc_word) >= MIN_STEM and query_word.startswith(doc_word):
        return STEM
    if len(query_word) >= 3 and doc_word.startswith(query_word) and len(doc_word) - len(query_word) <= MAX_ENDING:
        return STEM
    if len(query_word) >= 2 and query_word in doc_word:
        return SUBSTRING
    return 0.0


def ngrams(text: str) -> Counter[str]:
    """Character n-grams of each word, padded so word starts and ends count as features."""
    return ANALYZER.counts(text)


class NgramIndex(_SharedIndex):
    """The shared n-gram index (``public_apis.ngrams``) over tool documents, with TF-IDF (sublinear tf, smoothed
    idf, L2-normalised) cosine gated and blended by word matches."""

    def __init__(self, documents: Sequence[str]) -> None:
        super().__init__(documents, analyzer=ANALYZER, sublinear_tf=True)
        self._docs_of_word: dict[str, list[int]] = {}
        for doc_id, doc in enumerate(documents):
            for word in set(words(doc)):
                self._docs_of_word.setdefault(word, []).append(doc_id)
        self._fit()  # the postings now, not on the first query

    def _word_coverage(self, query_words: list[str]) -> np.ndarray:
        """Per document: the mean over query words of the best match among its words (0 where none matches)."""
        coverage = np.zeros(len(self), dtype=np.float32)
        for query_word in query_words:
            best = np.zeros(len(self), dtype=np.float32)
            for doc_word, ids in self._docs_of_word.items():
                if (level := word_match(query_word, doc_word)) > 0:
                    best[ids] = np.maximum(best[ids], level)
            coverage += best
        return coverage / max(len(query_words), 1)

    def search(self, query: str, limit: int = 10) -> list[tuple[int, float]]:
        """Up to ``limit`` (document index, score in (0, 1]) pairs, best first; none when no query word matches.

        The score is ``(cosine + word coverage) / 2`` (see the module docstring).
        """
        query_words = list(dict.fromkeys(words(query)))
        if not query_words:
            return []
        cosine = self.cosine(query)
        coverage = self._word_coverage(query_words)
        scores = np.where(coverage > 0, (cosine + coverage) / 2, 0.0).astype(np.float32)
        return ranked(scores, limit)  # ties: catalog order
