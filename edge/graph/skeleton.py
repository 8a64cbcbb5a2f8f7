"""The similarity skeleton of Phase A (paper §3.2): candidate edges u → v before any binding is judged.

    edges = build_skeleton(load_catalog())                      # K=15 intra, Kx=10 cross neighbours
    edges = build_skeleton(catalog, tools=names, embedder=SentenceTransformerEmbedder("/models/e5"))

Scoring all |V|² pairs with a proposer is too slow, so a retriever restricts each source u to its nearest
targets: u's text is its output fields (name + Korean description), v's text its non-generic input
parameters. Generic parameters (API key, paging, format) are filled by the runtime, never by an upstream
output, so they never create an edge. Sources are tools with an endpoint that are neither realtime nor
state-writing and that have output fields; targets are tools with an endpoint and a non-generic parameter.

The default embedder needs no model: character 2- and 3-grams plus whole ASCII identifiers (``corp_code``),
hashed, TF-IDF weighted and L2-normalised (the shared ``public_apis.ngrams`` index); any ``edge.embedding``
embedder can stand in. Tools that share a schema share its text, and each distinct text
is embedded once (so IDF counts a schema once, not once per copy: 1,700 Seoul LOCALDATA tools take the same
parameter). Same-platform neighbours are scored exactly against every distinct schema of the platform;
cross-platform neighbours come from one seeded hnswlib index per platform, built single-threaded so the
graph, and hence the answer, is fixed. Similarities are rounded to 6 decimals and ties broken by a seeded
rule (``_select``), so one seed always gives the same skeleton.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import hnswlib
import numpy as np

from edge.embedding import Embedder, SentenceTransformerEmbedder
from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.spec import ToolSpec
from public_apis.ngrams import Analyzer, NgramIndex

__all__ = ["CROSS_FLOOR", "CandidateEdge", "CharNgramEmbedder", "Embedder", "SentenceTransformerEmbedder",
           "build_skeleton", "is_source", "is_target", "source_text", "target_text"]

CROSS_FLOOR = 0.3  # the similarity an other-platform neighbour needs (see build_skeleton)
_DECIMALS = 6  # similarities are compared after rounding: BLAS kernels may differ in the last bits
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_CHUNK = re.compile(r"[0-9a-z\uac00-\ud7a3\u3131-\u318e]+")  # ASCII letters/digits and Hangul


@dataclass(frozen=True)
class CandidateEdge:
    source: str  # tool u
    target: str  # tool v
    similarity: float
    cross_platform: bool


class CharNgramEmbedder:
    """Hashed character n-gram TF-IDF vectors: no model, deterministic, good on short Korean schema text.

    The shared n-gram index (``public_apis.ngrams``) with raw tf, smoothed idf and ``crc32 % dim`` buckets."""

    def __init__(self, *, ngrams: tuple[int, ...] = (2, 3), dim: int = 2**15):
        self.ngrams, self.dim = ngrams, dim
        self.analyzer = Analyzer(sizes=ngrams, word=_CHUNK, lower=True, keep_short=True, identifiers=_IDENT)

    def features(self, text: str) -> list[str]:
        """Whole ASCII identifiers (``w:corp_code``) and the character n-grams of each word."""
        return self.analyzer.grams(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return NgramIndex(texts, analyzer=self.analyzer).vectors(hash_dim=self.dim)


def is_source(spec: ToolSpec) -> bool:
    """Its output can feed another call: a reproducible, read-only upstream call with output fields."""
    return spec.endpoint is not None and not spec.realtime and not spec.writes_state and bool(spec.output)


def is_target(spec: ToolSpec) -> bool:
    """It has an input an upstream output could fill: an upstream call with a non-generic parameter."""
    return spec.endpoint is not None and any(not p.is_generic for p in spec.params)


def source_text(spec: ToolSpec) -> str:
    return "\n".join(f"{f.name} {f.description_ko}" for f in spec.output)


def target_text(spec: ToolSpec) -> str:
    return "\n".join(f"{p.name} {p.description_ko}" for p in spec.params if not p.is_generic)


def build_skeleton(catalog: Catalog, *, k_intra: int = 15, k_cross: int = 10, min_similarity: float = 0.0,
                   min_cross_similarity: float = CROSS_FLOOR, embedder: Embedder | None = None, seed: int = 0,
                   tools: Sequence[str] | None = None) -> list[CandidateEdge]:
    """Candidate edges: per source, its top ``k_intra`` same-platform targets with similarity above
    ``min_similarity`` and its top ``k_cross`` other-platform targets above ``min_cross_similarity`` too, sorted by
    (source, -similarity, target).

    Within a platform the similarity only retrieves neighbours; what admits an edge is its judged feasibility
    s_e ≥ s_min (paper Table 9 and §E.2; ``edge.graph.build.admit_skeleton``). A floor there would judge the pair
    twice, and by the wrong measure: a search tool's text is all of its output fields, so the one field that feeds
    a target is diluted (``search_court_precedents`` → ``get_court_precedent_text`` by 판례일련번호 scores 0.24, and
    with a 0.3 floor no law, subway, bike or tollbooth tool of KOPA-Bench was ever a candidate). Across platforms a
    pair shares no API family, only what its text says, and a weak match is a coincidence of words: on the full
    catalog (T = 100, M = 500) the 19,416 cross-platform candidates under 0.3 succeeded in 0.5 % of 33,640 trials
    (a Seoul business's name looked up in a Gyeonggi table of another trade), the 3,275 same-platform ones under
    0.3 in 57 %. The cross-platform ones were a third of the admitted edges, and Phase A spent its budget on them."""
    specs = [catalog.get(name) for name in sorted(set(catalog.names() if tools is None else tools))]
    sources = [s for s in specs if is_source(s)]
    targets = [s for s in specs if is_target(s)]
    if not sources or not targets:
        return []
    # each distinct text is embedded and scored once; a hit on it stands for every tool with that text
    src_groups = _groups((s.platform, source_text(s), s.name) for s in sources)
    texts = sorted({text for _, text in src_groups} | {target_text(t) for t in targets})
    vectors = np.asarray((embedder or CharNgramEmbedder()).embed(texts), dtype=np.float32)
    vector_of = dict(zip(texts, vectors, strict=True))

    # per source group: (similarity, target names) hits, same platform and other platforms apart
    intra: dict[tuple[str, str], list[_Hit]] = {key: [] for key in src_groups}
    cross: dict[tuple[str, str], list[_Hit]] = {key: [] for key in src_groups}
    for platform in sorted({t.platform for t in targets}):
        tgt_groups = _groups((platform, target_text(t), t.name) for t in targets if t.platform == platform)
        members = list(tgt_groups.values())
        tgt_vec = np.stack([vector_of[text] for _, text in tgt_groups])
        if k_intra:
            for key in (key for key in src_groups if key[0] == platform):
                sims = _round(tgt_vec @ vector_of[key[1]])  # exact: a platform has few distinct schemas
                intra[key] = list(zip(sims.tolist(), members, strict=True))
        queries = sorted({text for source_platform, text in src_groups if source_platform != platform})
        if k_cross and queries:
            found = dict(zip(queries, _ann(tgt_vec, np.stack([vector_of[q] for q in queries]), 2 * k_cross, seed),
                             strict=True))
            for key in (key for key in src_groups if key[0] != platform):
                cols = found[key[1]]
                sims = _round(tgt_vec[cols] @ vector_of[key[1]])  # the exact score of each ANN hit
                cross[key].extend(zip(sims.tolist(), (members[c] for c in cols), strict=True))

    edges: list[CandidateEdge] = []
    for key, names in src_groups.items():
        for source in names:
            edges.extend(CandidateEdge(source, target, sim, False)
                         for sim, target in _select(intra[key], k_intra, min_similarity, source, seed))
            edges.extend(CandidateEdge(source, target, sim, True) for sim, target in _select(
                cross[key], k_cross, max(min_similarity, min_cross_similarity), source, seed))
    edges.sort(key=lambda e: (e.source, -e.similarity, e.target))
    return edges


_Hit = tuple[float, tuple[str, ...]]  # a similarity and the tools (sorted names) that share the matched text


def _groups(rows: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """(platform, text, name) rows as (platform, text) → sorted names, keys in sorted order."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for platform, text, name in rows:
        grouped.setdefault((platform, text), []).append(name)
    return {key: tuple(sorted(grouped[key])) for key in sorted(grouped)}


def _round(sims: np.ndarray) -> np.ndarray:
    return np.round(sims.astype(np.float64), _DECIMALS)


def _select(hits: list[_Hit], k: int, floor: float, source: str, seed: int) -> list[tuple[float, str]]:
    """The ``k`` best (similarity, target) above ``floor``, highest first, never ``source`` itself.

    Tied targets (tools sharing one schema) are taken in name order from a seeded per-source offset, so
    that 1,700 same-schema tools share the in-edges instead of the alphabetically first ``k`` taking them all.
    """
    ranked = sorted((h for h in hits if h[0] > floor), key=lambda h: -h[0])
    chosen: list[tuple[float, str]] = []
    for sim, group in itertools.groupby(ranked, key=lambda h: h[0]):
        if len(chosen) >= k:
            break
        tied = sorted(name for _, names in group for name in names if name != source)
        start = zlib.crc32(f"{seed}:{source}".encode()) % len(tied) if tied else 0
        chosen.extend((sim, name) for name in (tied[start:] + tied[:start])[:k - len(chosen)])
    return chosen


def _ann(items: np.ndarray, queries: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Row indices of the ``k`` items nearest each query (inner product), from a seeded hnswlib index."""
    k = min(len(items), k)
    index = hnswlib.Index(space="ip", dim=items.shape[1])
    index.init_index(max_elements=len(items), M=16, ef_construction=200, random_seed=seed)
    index.add_items(items, np.arange(len(items)), num_threads=1)  # one thread: insertion order fixes the graph
    index.set_ef(max(k, 100))
    labels, _ = index.knn_query(queries, k=k, num_threads=1)
    return labels.astype(np.int64)
