"""The one character n-gram analyser and the one n-gram index: the gateway's tool search, EDGE's skeleton and
proposer and the data filters all cut text into n-grams here and score them here.

    analyzer = Analyzer(sizes=(2, 3), word=re.compile(r"[^\\W_]+"), pad=True, nfkc=True, lower=True)
    analyzer.grams("전환사채 발행")                    # [' 전', '전환', ..., ' 전환', ...] (with repeats)
    index = NgramIndex(["회사 고유번호", "노선 번호"], analyzer=analyzer, sublinear_tf=True)
    index.cosine("고유번호")                          # TF-IDF cosine per entry (float32 array, entry order)
    index.vectors(hash_dim=2**15)                     # dense L2-normalised TF-IDF rows (an embedder's output)
    index.scores(analyzer.gram_set("회사"), "dice")    # Jaccard or Dice of the n-gram sets, per entry
    NgramIndex(analyzer=trigrams, threshold=0.8).best(grams)  # the most similar entry with Jaccard ≥ 0.8

What differs between the users is configuration, not code: which characters make a word (``word``; None takes
the whitespace-collapsed text as one unit), whether words are padded with a space so their edges count
(``pad``), whether a unit shorter than every n-gram size counts as a feature itself (``keep_short``), NFKC and
lower-casing, and whether whole ASCII identifiers count too (``identifiers``, as ``w:corp_code``). The measures
differ by design and are all offered over the same n-gram sets: TF-IDF cosine (the search, the skeleton),
Jaccard (near-duplicates), Dice (the proposer's description overlap).

TF-IDF is scikit-learn's definition (smoothed idf ``ln((1 + n) / (1 + df)) + 1``, optional sublinear tf
``1 + ln tf``, L2 rows), computed here rather than with ``TfidfVectorizer(analyzer="char_wb")``: on the
2,416-tool catalog that vectoriser builds faster (0.59 s against 1.6 s for the old search index) but costs
about 3 ms per query for its ``transform`` where the postings below take a fraction of that, and its hashing
(murmur) would move every skeleton edge. The cosine index weighs in float64 and stores float32; the dense
vectors are float32 throughout (what the skeleton's BLAS products and hnswlib take).
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["Analyzer", "Measure", "NgramIndex", "collapse_spaces", "dice", "jaccard", "l2_rows", "ranked", "top_by"]

Measure = Literal["jaccard", "dice"]
_SPACES = re.compile(r"\s+")


def collapse_spaces(text: str) -> str:
    """Whitespace collapsed to one space and trimmed: spacing differences do not make two texts different."""
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class Analyzer:
    """How text becomes character n-grams (see the module docstring for each option)."""

    sizes: tuple[int, ...] = (2, 3)
    word: re.Pattern[str] | None = None
    pad: bool = False
    keep_short: bool = False
    nfkc: bool = False
    lower: bool = False
    identifiers: re.Pattern[str] | None = None

    def normalize(self, text: str) -> str:
        if self.nfkc:
            text = unicodedata.normalize("NFKC", text)
        if self.lower:
            text = text.lower()
        return collapse_spaces(text)

    def words(self, text: str) -> list[str]:
        """The units n-grams are cut from: the ``word`` matches of the normalised text, or all of it."""
        text = self.normalize(text)
        if self.word is None:
            return [text] if text else []
        return self.word.findall(text)

    def grams(self, text: str) -> list[str]:
        """Every feature of ``text``, repeats included (identifiers first, then each word's n-grams)."""
        feats = [f"w:{m.group().lower()}" for m in self.identifiers.finditer(text)] if self.identifiers else []
        shortest = min(self.sizes)
        for word in self.words(text):
            unit = f" {word} " if self.pad else word
            if self.keep_short and len(unit) < shortest:
                feats.append(unit)  # a one-syllable word ('역') would otherwise vanish
            for n in self.sizes:
                feats.extend(unit[i:i + n] for i in range(len(unit) - n + 1))
        return feats

    def counts(self, text: str) -> Counter[str]:
        return Counter(self.grams(text))

    def gram_set(self, text: str) -> frozenset[str]:
        return frozenset(self.grams(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are the same text (1.0)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """2 |a ∩ b| / (|a| + |b|); nothing to compare (either set empty) is no overlap (0.0)."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


_MEASURES = {"jaccard": jaccard, "dice": dice}
_FIRST_REORDER = 32  # entries before the prefix order first follows the n-grams' rarity


def l2_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its L2 norm (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1)


class NgramIndex:
    """Entries (a key and its n-gram counts), in insertion order, and the measures over them.

    ``documents`` are added with keys 0, 1, …; ``add`` takes a text (cut by ``analyzer``) or ready n-grams (a
    set, or a Counter for repeats). ``threshold`` enables ``best``: Jaccard near-duplicates by prefix filtering —
    with the n-grams of each set sorted in one order, two sets with Jaccard ≥ t share at least one of each other's
    first ``|A| - ceil(t·|A|) + 1`` n-grams, so only entries sharing a prefix n-gram (and of a size Jaccard ≥ t
    allows) are scored, and the answer does not depend on insertion order but for ties (the entry added first
    wins). The order puts rare n-grams first (by how many entries held each when the index last doubled, then by
    string; every prefix is recomputed then): templated questions share their common n-grams, and a prefix of
    those made every entry a candidate (EDGE's 5,000 items: the near-duplicate check was quadratic).
    """

    def __init__(self, documents: Iterable[str] = (), *, analyzer: Analyzer = Analyzer(),
                 sublinear_tf: bool = False, threshold: float | None = None):
        if threshold is not None and not 0 < threshold <= 1:
            raise ValueError(f"threshold {threshold} must be in (0, 1]")
        self.analyzer, self.sublinear_tf, self.threshold = analyzer, sublinear_tf, threshold
        self._keys: list[Hashable] = []
        self._rank: dict[Hashable, int] = {}
        self._counts: list[Counter[str]] = []
        self._sets: list[frozenset[str]] = []
        self._prefixes: dict[str, list[int]] = {}
        self._held: Counter[str] = Counter()  # entries holding each n-gram
        self._rarity: dict[str, int] = {}  # ``_held`` when the prefixes were last computed: the prefix order
        self._reorder_at = _FIRST_REORDER
        self._fitted: tuple[dict[str, float], np.ndarray, np.ndarray, np.ndarray, dict[str, int]] | None = None
        for key, doc in enumerate(documents):
            self.add(key, doc)

    # --- entries -----------------------------------------------------------------------------------------

    def add(self, key: Hashable, grams: str | Iterable[str]) -> None:
        """A new entry at the end; a key already there keeps its place and takes the new n-grams."""
        counts = self.analyzer.counts(grams) if isinstance(grams, str) else Counter(grams)
        row = self._rank.get(key)
        if row is None:
            row = self._rank[key] = len(self._keys)
            self._keys.append(key)
            self._counts.append(counts)
            self._sets.append(frozenset(counts))
        else:
            self._held.subtract(self._sets[row])
            self._counts[row], self._sets[row] = counts, frozenset(counts)
        self._held.update(self._sets[row])
        if self.threshold is not None:
            if len(self._keys) >= self._reorder_at:
                self._reorder()
            else:
                for g in self._prefix(self._sets[row]):
                    self._prefixes.setdefault(g, []).append(row)
        self._fitted = None

    def _reorder(self) -> None:
        """Rare n-grams first, by the entries held now; every entry's prefix again in that order."""
        self._rarity = {g: n for g, n in self._held.items() if n > 0}
        self._prefixes = {}
        for row, grams in enumerate(self._sets):
            for g in self._prefix(grams):
                self._prefixes.setdefault(g, []).append(row)
        self._reorder_at = 2 * len(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def keys(self) -> list[Hashable]:
        return list(self._keys)

    def grams(self, text: str) -> frozenset[str]:
        return self.analyzer.gram_set(text)

    # --- set measures ------------------------------------------------------------------------------------

    def scores(self, grams: frozenset[str], measure: Measure = "jaccard") -> list[float]:
        """``measure`` of ``grams`` against every entry's n-gram set, in entry order (exact, no filtering)."""
        score = _MEASURES[measure]
        return [score(grams, other) for other in self._sets]

    def _prefix(self, grams: frozenset[str]) -> list[str]:
        assert self.threshold is not None
        size = len(grams) - math.ceil(self.threshold * len(grams)) + 1
        rarity = self._rarity
        return sorted(grams, key=lambda g: (rarity.get(g, 0), g))[:max(size, 1)]

    def best(self, grams: frozenset[str]) -> tuple[Hashable, float] | None:
        """The entry with the highest Jaccard ≥ ``threshold`` (ties: the one added first), or None."""
        if self.threshold is None:
            raise ValueError("best needs an index built with a threshold")
        seen: set[int] = set()
        for g in self._prefix(grams):
            seen.update(self._prefixes.get(g, ()))
        found: tuple[Hashable, float] | None = None
        low, high = self.threshold * len(grams), len(grams) / self.threshold  # |B| outside: Jaccard < t
        for row in sorted(seen):
            other = self._sets[row]
            if not low <= len(other) <= high:
                continue
            score = jaccard(grams, other)
            if score >= self.threshold and (found is None or score > found[1]):
                found = (self._keys[row], score)
        return found

    # --- TF-IDF ------------------------------------------------------------------------------------------

    def _triplets(self, column_of: Mapping[str, int] | None = None
                  ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], dict[str, int]]:
        """((row, column, count) of every entry's features, the columns): by ``column_of``, else one per gram."""
        rows: list[int] = []
        cols: list[int] = []
        counts: list[int] = []
        new: dict[str, int] = {} if column_of is None else dict(column_of)
        for row, entry in enumerate(self._counts):
            summed: dict[int, int] = {}  # features sharing a column (hash buckets) add up
            for gram, count in entry.items():
                col = new.get(gram)
                if col is None:
                    col = new[gram] = len(new)
                summed[col] = summed.get(col, 0) + count
            rows.extend([row] * len(summed))
            cols.extend(summed)
            counts.extend(summed.values())
        return (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                np.asarray(counts, dtype=np.float64)), new

    @staticmethod
    def _idf(df: np.ndarray, n: int) -> np.ndarray:
        return np.log((1 + n) / (1 + df)) + 1  # smoothed: a feature in every entry still counts a little

    def _tf(self, counts: np.ndarray) -> np.ndarray:
        return 1.0 + np.log(counts) if self.sublinear_tf else counts

    def _fit(self) -> tuple[dict[str, float], np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
        """Postings by gram (CSC over entries): idf, column pointers, entry ids, L2-normalised weights."""
        if self._fitted is None:
            (rows, cols, counts), column_of = self._triplets()
            n_cols = len(column_of)
            df = np.bincount(cols, minlength=n_cols)
            idf = self._idf(df, len(self))
            weights = self._tf(counts) * idf[cols]
            norms = np.sqrt(np.bincount(rows, weights * weights, minlength=len(self)))
            weights /= np.where(norms > 0, norms, 1)[rows]
            order = np.lexsort((rows, cols))  # by gram, then entry
            pointers = np.zeros(n_cols + 1, dtype=np.int64)
            np.cumsum(np.bincount(cols, minlength=n_cols), out=pointers[1:])
            idf_of = dict(zip(column_of, idf.tolist(), strict=True))
            self._fitted = (idf_of, pointers, rows[order].astype(np.int32), weights[order].astype(np.float32),
                            column_of)
        return self._fitted

    def cosine(self, text: str) -> np.ndarray:
        """TF-IDF cosine of ``text`` with every entry (float32, entry order); grams no entry has are ignored."""
        idf, pointers, ids, weights, column_of = self._fit()
        raw = {g: (1.0 + math.log(tf) if self.sublinear_tf else float(tf)) * idf[g]
               for g, tf in self.analyzer.counts(text).items() if g in idf}
        norm = math.sqrt(sum(w * w for w in raw.values())) or 1.0
        cosine = np.zeros(len(self), dtype=np.float32)
        for gram, w in raw.items():  # the query's first-occurrence order: float32 sums are order-sensitive
            col = column_of[gram]
            lo, hi = pointers[col], pointers[col + 1]
            cosine[ids[lo:hi]] += (w / norm) * weights[lo:hi]
        return cosine

    def vectors(self, *, hash_dim: int | None = None) -> np.ndarray:
        """Dense TF-IDF rows, L2-normalised, float32: one per entry, comparable with each other only.

        ``hash_dim``: features go to ``crc32(feature) % hash_dim`` buckets (colliding features share a column;
        crc32, not ``hash()``, which changes per process). Only columns in use are kept — the same dot products
        as the full vectors — in sorted (bucket or feature) order.
        """
        if hash_dim is None:
            names = sorted({g for entry in self._counts for g in entry})
            column_of = {g: i for i, g in enumerate(names)}
            (rows, cols, counts), _ = self._triplets(column_of)
            n_cols = len(names)
        else:
            bucket_of = {g: zlib.crc32(g.encode()) % hash_dim for entry in self._counts for g in entry}
            used = sorted(set(bucket_of.values()))
            column = {b: i for i, b in enumerate(used)}
            (rows, cols, counts), _ = self._triplets({g: column[b] for g, b in bucket_of.items()})
            n_cols = len(used)
        matrix = np.zeros((len(self), max(n_cols, 1)), dtype=np.float32)
        matrix[rows, cols] = counts
        present = matrix > 0
        if self.sublinear_tf:
            matrix[present] = 1 + np.log(matrix[present])
        df = present.sum(axis=0)
        matrix *= self._idf(df, len(self)).astype(np.float32)
        return l2_rows(matrix)


def ranked(scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Up to ``limit`` (index, score) with score > 0, best first; ties in index order."""
    hits = np.flatnonzero(scores > 0)
    order = hits[np.lexsort((hits, -scores[hits]))][:limit]
    return [(int(i), float(scores[i])) for i in order]


def top_by(entries: Sequence[Hashable], scores: Sequence[float]) -> tuple[Hashable, float] | None:
    """The entry with the highest score (ties: the first), or None when there is none."""
    if not scores:
        return None
    best = max(range(len(scores)), key=scores.__getitem__)
    return entries[best], scores[best]
