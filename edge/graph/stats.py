"""What a Phase A run produced, beside the paper's Figure 4: edge counts, pruning, and execution success
of the skeleton, the refined graph G* and the pruned set, measured on held-out trials.

Held-out trials are new single-edge executions with a seed no round used, so the comparison is not the
evidence the loop pruned by: an edge set's success rate is the share of its edge executions (the source
call answered, the bound call ran) that came back as a success with records.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_gateway.catalog import Catalog

from .pool import PathExecutor, PathJob
from .sampler import EdgeKey, trial_rng
from .store import GraphStore

PAPER_FIGURE_4 = {"skeleton": 0.502, "refined": 0.627, "pruned": 0.148}
HELDOUT_ROUND = 1_000_000  # trial generators for held-out executions: never a real round number
SUCCESS = ("semantic_success", "generic_success")


@dataclass(frozen=True)
class GraphCounts:
    admitted: int
    live: int
    pruned: int
    rounds: int
    trials: int
    by_platform: dict[str, int]  # live edges by source platform
    by_domain: dict[str, int]  # live edges by source domain
    cross_platform: int  # live edges between two platforms

    @property
    def pruned_fraction(self) -> float:
        return self.pruned / self.admitted if self.admitted else 0.0


def graph_counts(store: GraphStore, catalog: Catalog) -> GraphCounts:
    edges = store.edges()
    live = [e for e in edges if e.pruned_round is None]
    return GraphCounts(
        admitted=len(edges), live=len(live), pruned=len(edges) - len(live), rounds=len(store.rounds()),
        trials=sum(r[2] for r in store.rounds()),
        by_platform=dict(sorted(Counter(catalog.get(e.source).platform for e in live).items())),
        by_domain=dict(sorted(Counter(catalog.get(e.source).domain for e in live).items())),
        cross_platform=sum(e.cross_platform for e in live))


def sample_edges(edges: Sequence[EdgeKey], n: int, *, seed: int) -> list[EdgeKey]:
    """A seeded sample of ``n`` edges (all of them when ``n`` is 0 or covers the set), in sorted order."""
    if n == 0 or n >= len(edges):
        return sorted(edges)
    return sorted(random.Random(seed).sample(sorted(edges), n))


@dataclass(frozen=True)
class HeldOut:
    edges: int  # edges of the set that were tried
    executions: int  # edge executions (the source call answered with a record)
    successes: int

    @property
    def rate(self) -> float | None:
        return self.successes / self.executions if self.executions else None


async def heldout_success(paths: PathExecutor, edges: Sequence[EdgeKey], *, seed: int, per_edge: int = 2,
                          cache: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> HeldOut:
    """Run each edge ``per_edge`` times as a one-edge path with fresh generators; count its executions."""
    jobs = [PathJob((edge,), trial_rng(seed, HELDOUT_ROUND, i), (HELDOUT_ROUND, i))
            for i, edge in enumerate(e for e in edges for _ in range(per_edge))]
    runs = await paths.run(jobs, cache or {})
    executed = [r for records, _ in runs for r in records if r.hop]
    return HeldOut(len(edges), len(executed), sum(r.outcome in SUCCESS for r in executed))
