"""Phase A's loop: admit the skeleton, then T rounds of sample → execute → update → prune (paper §3.2).

    store = GraphStore.create(path, meta=run_meta(...))
    await build_graph(runtime, catalog, store, PhaseASettings(rounds=5, trials=50))

Each round samples its M paths from the posteriors as they stood when it began (Thompson sampling, one
generator per (seed, round, path)), runs them concurrently, then applies every update in path order,
prunes by Eq. 5 and commits — all of it in one transaction. The same bundle and seed therefore give the
same graph whatever the concurrency, and a killed run resumes at the round it was in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.spec import ToolSpec
from mcp_gateway.runtime.runtime import ToolRuntime

from .executor import PathRunner
from .posterior import EdgePosterior
from .sampler import EdgeKey, ThompsonSampler, trial_rng
from .settings import PhaseASettings
from .store import GraphStore, TrialRecord


class Proposal(Protocol):
    feasibility: float

    @property
    def plan(self) -> Sequence[Any]: ...


class Proposer(Protocol):
    def propose(self, source: ToolSpec, target: ToolSpec) -> Proposal | None: ...


@dataclass(frozen=True)
class RoundSummary:
    round: int
    paths: int
    trials: int
    edge_trials: int
    edge_successes: int
    pruned: int
    live_edges: int


def plan_as_json(plan: Sequence[Any]) -> list[dict[str, Any]]:
    """A source plan as stored: one dict per parameter (param, kind, field, candidates)."""
    out = []
    for source in plan:
        item = asdict(source) if hasattr(source, "__dataclass_fields__") else dict(source)
        item["kind"] = str(item["kind"])
        item["candidates"] = list(item.get("candidates") or ())
        out.append(item)
    return out


def admit_skeleton(store: GraphStore, catalog: Catalog, settings: PhaseASettings, proposer: Proposer,
                   candidates: Sequence[Any]) -> int:
    """Propose a binding for every candidate edge; admit those whose feasibility meets s_min, with their prior."""
    rows = []
    for edge in candidates:
        proposal = proposer.propose(catalog.get(edge.source), catalog.get(edge.target))
        if proposal is None or proposal.feasibility < settings.s_min:
            continue
        rows.append((edge.source, edge.target, edge.similarity, edge.cross_platform, proposal.feasibility,
                     plan_as_json(proposal.plan), EdgePosterior.from_feasibility(proposal.feasibility,
                                                                                 kappa=settings.kappa)))
    return store.add_edges(rows)


async def run_round(store: GraphStore, runner: PathRunner, settings: PhaseASettings, round_no: int, *,
                    concurrency: int = 8) -> RoundSummary:
    posteriors = store.posteriors(live_only=True)
    sampler = ThompsonSampler(posteriors, epsilon=settings.epsilon_explore)
    cache = store.inputs_seen()
    rngs = [trial_rng(settings.seed, round_no, m) for m in range(settings.trials)]
    paths = [sampler.path(rng, max_edges=settings.max_path_edges) for rng in rngs]
    limit = asyncio.Semaphore(concurrency)

    async def one(m: int) -> tuple[list[TrialRecord], list[Any]]:
        async with limit:
            return await runner.run(paths[m], rngs[m], trial=(round_no, m), cache=cache)

    results = await asyncio.gather(*(one(m) for m in range(len(paths))))
    trials = [t for records, _ in results for t in records]
    updated = dict(posteriors)
    for t in trials:  # in path order: the same updates whatever order the paths finished in
        if t.hop and t.source is not None:
            key = (t.source, t.target)
            updated[key] = updated[key].updated(t.outcome)
    pruned = [k for k, p in sorted(updated.items()) if p.prunable(tau=settings.tau_prune,
                                                                  epsilon=settings.epsilon_prune, n_min=settings.n_min)]
    observations = [(o.tool, o.inputs, o.first_record) for _, observed in results for o in observed]
    store.commit_round(round_no, paths=sum(bool(p) for p in paths), trials=trials,
                       posteriors={k: p for k, p in updated.items() if p != posteriors[k]}, pruned=pruned,
                       observations=observations)
    edge_trials = [t for t in trials if t.hop]
    return RoundSummary(round_no, sum(bool(p) for p in paths), len(trials), len(edge_trials),
                        sum(t.outcome in ("semantic_success", "generic_success") for t in edge_trials), len(pruned),
                        len(posteriors) - len(pruned))


async def build_graph(runtime: ToolRuntime, catalog: Catalog, store: GraphStore, settings: PhaseASettings, *,
                      proposer: Proposer, candidates: Callable[[], Sequence[Any]], concurrency: int = 8,
                      on_round: Callable[[RoundSummary], None] = lambda s: None) -> list[RoundSummary]:
    """Admit the skeleton (first start only), then run the rounds not yet committed."""
    if not store.edges():
        admit_skeleton(store, catalog, settings, proposer, candidates())
    plans: dict[EdgeKey, Any] = {e.key: e.plan for e in store.edges()}
    runner = PathRunner(runtime, catalog, plans, retries=settings.environmental_retries)
    summaries = []
    for round_no in range(store.next_round(), settings.rounds):
        summary = await run_round(store, runner, settings, round_no, concurrency=concurrency)
        summaries.append(summary)
        on_round(summary)
    return summaries
