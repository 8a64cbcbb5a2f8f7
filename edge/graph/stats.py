"""What a Phase A run produced, beside the paper's Figures 4, 6 and 7: edge counts, pruning, and execution
success of the skeleton, the refined graph G* and the pruned set, measured on held-out trials.

Held-out trials are new single-edge executions with a seed no round used, so the comparison is not the
evidence the loop pruned by: an edge set's success rate is the share of its edge executions (the source
call answered, the bound call ran) that came back as a success with records.

``figures(store)`` reads the run's own figures from the run file alone, as JSON data (``edge.graph.plots`` draws
them): Figure 4's in-loop success per edge set (edges tried at least once, and at least ten times) and the share
of tested edges that never succeeded; Figure 6's trajectory pass rate and step success per round with their moving
average; Figure 7's prior feasibility against posterior mean, kept and pruned apart.
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


# ------------------------------------------------------------------------------------------------------------
# The run's own Figures 4, 6 and 7, from the run file alone (no new trials): what `kopa edge graph stats`
# prints under "figure_4" / "figure_6" / "figure_7" and what ``edge.graph.plots`` draws.

PAPER_FIGURE_4B = {"refined": 0.277, "pruned": 0.705}  # share of tested edges that never succeeded
PAPER_FIGURE_6 = {"pass_rate": 0.31, "step_success": 0.28}  # rise over the 100 iterations (moving average)
HIGH_EVIDENCE = 10  # Figure 4's dark bars: edges with t_e ≥ 10 trials
EDGE_SETS = ("skeleton", "refined", "pruned")
_SUCCESS_SQL = "('semantic_success', 'generic_success')"


@dataclass(frozen=True)
class RoundPoint:
    """One Phase A round as Figure 6 reads it: a path passes when every call of it succeeded (a path stops at
    its first failed call, and an edge call that returns no record is a failure, so a passed path ran whole)."""

    round: int
    paths: int  # paths sampled (non-empty)
    calls: int  # calls made, source calls included
    successes: int  # calls that succeeded
    passed: int  # paths whose every call succeeded
    pruned: int  # edges pruned at the end of the round
    live: int  # live edges after it

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.paths if self.paths else None

    @property
    def step_success(self) -> float | None:
        return self.successes / self.calls if self.calls else None


def round_points(store: GraphStore) -> list[RoundPoint]:
    passed = dict(store.con.execute(
        "SELECT round, count(*) FILTER (WHERE ok) FROM (SELECT round, trial, "
        f"bool_and(outcome IN {_SUCCESS_SQL}) AND max(hop) >= 1 AS ok FROM trials GROUP BY round, trial) "
        "GROUP BY round").fetchall())
    live = store.con.execute("SELECT count(*) FROM edges").fetchone()[0]
    points = []
    for round_no, paths, calls, successes, pruned in store.rounds():
        live -= pruned
        points.append(RoundPoint(round_no, paths, calls, successes, passed.get(round_no, 0), pruned, live))
    return points


def moving_average(values: Sequence[float | None], window: int) -> list[float | None]:
    """The trailing mean over up to ``window`` values (fewer at the start); rounds without a value are skipped."""
    out: list[float | None] = []
    for i in range(len(values)):
        seen = [v for v in values[max(0, i - window + 1):i + 1] if v is not None]
        out.append(sum(seen) / len(seen) if seen else None)
    return out


def smoothing_window(rounds: int) -> int:
    """Figure 6's moving-average window: 10 rounds on the paper's 100, a quarter of a short run."""
    return max(1, min(10, rounds // 4))


def figure_6(store: GraphStore) -> dict[str, Any]:
    """Trajectory pass rate and step success per round, their moving averages and the rise between the first
    and last smoothed value (the paper's +31 pp and +28 pp over 100 rounds)."""
    points = round_points(store)
    window = smoothing_window(len(points))
    series: dict[str, Any] = {"window": window, "round": [p.round for p in points],
                              "paths": [p.paths for p in points], "calls": [p.calls for p in points],
                              "passed": [p.passed for p in points], "successes": [p.successes for p in points],
                              "pruned": [p.pruned for p in points], "live": [p.live for p in points],
                              "pass_rate": [p.pass_rate for p in points],
                              "step_success": [p.step_success for p in points]}
    rise = {}
    for name in ("pass_rate", "step_success"):
        smooth = moving_average(series[name], window)
        series[f"{name}_ma"] = smooth
        known = [v for v in smooth if v is not None]
        rise[name] = known[-1] - known[0] if known else None
    return {**series, "rise": rise, "paper_rise": dict(PAPER_FIGURE_6)}


@dataclass(frozen=True)
class EdgeEvidence:
    """An admitted edge as Figures 4 and 7 read it: its prior, converged posterior and in-loop executions
    (replay misses are no evidence and are not counted)."""

    key: EdgeKey
    feasibility: float  # s_e, the prior's anchor
    mean: float  # θ̄_e, the posterior mean at the end of the run
    trials: int  # t_e
    successes: int
    pruned_round: int | None

    @property
    def pruned(self) -> bool:
        return self.pruned_round is not None


def edge_evidence(store: GraphStore) -> list[EdgeEvidence]:
    counts = {(s, t): (n, k) for s, t, n, k in store.con.execute(
        f"SELECT source, target, count(*), count(*) FILTER (WHERE outcome IN {_SUCCESS_SQL}) FROM trials "
        "WHERE hop >= 1 AND outcome <> 'replay_miss' GROUP BY source, target").fetchall()}
    return [EdgeEvidence(e.key, e.feasibility, e.posterior.mean, *counts.get(e.key, (0, 0)), e.pruned_round)
            for e in store.edges()]


def _sets(edges: Sequence[EdgeEvidence]) -> dict[str, list[EdgeEvidence]]:
    return {"skeleton": list(edges), "refined": [e for e in edges if not e.pruned],
            "pruned": [e for e in edges if e.pruned]}


def _pooled(edges: Sequence[EdgeEvidence], least: int) -> dict[str, Any]:
    tried = [e for e in edges if e.trials >= least]
    n, k = sum(e.trials for e in tried), sum(e.successes for e in tried)
    return {"edges": len(tried), "executions": n, "successes": k, "rate": k / n if n else None}


def figure_4(edges: Sequence[EdgeEvidence], heldout: Mapping[str, HeldOut] | None = None) -> dict[str, Any]:
    """Figure 4 of the run: (a) execution success of the skeleton, G* and the pruned set, pooled over the in-loop
    executions of edges tried at least once (light bars) and at least ``HIGH_EVIDENCE`` times (dark bars), with
    the held-out rate when it was measured; (b) the share of tested edges that never succeeded."""
    out: dict[str, Any] = {"high_evidence": HIGH_EVIDENCE, "success": {}, "zero_success": {}}
    for name, group in _sets(edges).items():
        held = (heldout or {}).get(name)
        out["success"][name] = {"tested": _pooled(group, 1), "high_evidence": _pooled(group, HIGH_EVIDENCE),
                                "heldout": held.rate if held else None, "paper": PAPER_FIGURE_4[name]}
        tested = [e for e in group if e.trials]
        zero = sum(e.successes == 0 for e in tested)
        out["zero_success"][name] = {"tested": len(tested), "zero": zero,
                                     "share": zero / len(tested) if tested else None,
                                     "paper": PAPER_FIGURE_4B.get(name)}
    return out


def figure_7(edges: Sequence[EdgeEvidence], *, tau: float) -> dict[str, Any]:
    """Figure 7 in numbers: every admitted edge probed at least once is a point (prior s_e, posterior mean θ̄_e);
    how the kept and the pruned sets lie against the diagonal and the threshold τ."""
    out: dict[str, Any] = {"tau": tau, "probed": sum(e.trials > 0 for e in edges),
                           "pruned_untried": sum(e.pruned and not e.trials for e in edges)}
    for name, group in (("kept", [e for e in edges if e.trials and not e.pruned]),
                        ("pruned", [e for e in edges if e.trials and e.pruned])):
        out[name] = {"edges": len(group),
                     "mean_prior": sum(e.feasibility for e in group) / len(group) if group else None,
                     "mean_posterior": sum(e.mean for e in group) / len(group) if group else None,
                     "below_tau": sum(e.mean < tau for e in group),
                     "below_diagonal": sum(e.mean < e.feasibility for e in group)}
    return out


def figures(store: GraphStore, heldout: Mapping[str, HeldOut] | None = None, *,
            edges: Sequence[EdgeEvidence] | None = None) -> dict[str, Any]:
    """Figures 4, 6 and 7 of a run, as JSON data (``edges``: ``edge_evidence(store)`` when already read)."""
    edges = edge_evidence(store) if edges is None else edges
    tau = float(store.meta().get("settings", {}).get("tau_prune", 0.5))
    return {"figure_4": figure_4(edges, heldout), "figure_6": figure_6(store), "figure_7": figure_7(edges, tau=tau)}
