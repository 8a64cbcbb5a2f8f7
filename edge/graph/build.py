"""Phase A's loop: admit the skeleton, then T rounds of sample → execute → update → prune (paper §3.2).

    store = GraphStore.create(path, meta=run_meta(...))
    await build_graph(runtime, catalog, store, PhaseASettings(rounds=5, trials=50))

Each round samples its M paths from the posteriors as they stood when it began (Thompson sampling, one
generator per (seed, round, path)), runs them concurrently, then applies every update in path order,
prunes by Eq. 5 and commits — all of it in one transaction. The same bundle and seed therefore give the
same graph whatever the concurrency, and a killed run resumes at the round it was in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.spec import ToolSpec
from mcp_gateway.runtime.runtime import ToolRuntime

from .executor import PathRunner
from .pool import InProcessPaths, PathExecutor, PathJob
from .posterior import EdgePosterior
from .sampler import EdgeKey, ThompsonSampler, trial_rng, undecided
from edge.settings import PhaseASettings
from .store import GraphStore


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
    for edge, proposal in zip(candidates, _proposals(proposer, catalog, candidates), strict=True):
        if proposal is None or proposal.feasibility < settings.s_min:
            continue
        rows.append((edge.source, edge.target, edge.similarity, edge.cross_platform, proposal.feasibility,
                     plan_as_json(proposal.plan), EdgePosterior.from_feasibility(proposal.feasibility,
                                                                                 kappa=settings.kappa)))
    return store.add_edges(rows)


def _proposals(proposer: Proposer, catalog: Catalog, candidates: Sequence[Any]) -> list[Proposal | None]:
    """One proposal per candidate, in the candidates' order; a proposer with ``propose_many`` (the LLM one)
    answers them concurrently."""
    pairs = [(catalog.get(edge.source), catalog.get(edge.target)) for edge in candidates]
    many = getattr(proposer, "propose_many", None)
    if many is None:
        return [proposer.propose(source, target) for source, target in pairs]
    from .llm_proposer import run_blocking  # only a concurrent proposer needs it (and httpx)

    return list(run_blocking(many(pairs)))


def edges_to_test(store: GraphStore, posteriors: Mapping[EdgeKey, Any], settings: PhaseASettings,
                  seen: Mapping[str, Any]) -> set[EdgeKey]:
    """The undecided edges (``sampler.undecided``) a path can test: a tool that started 4 × floor paths and never
    answered with a record stops every path it starts before the hop, so its edges are left to Thompson sampling
    (on the full catalog 698 such edges took every path of the last rounds)."""
    floor = settings.n_min if settings.explore_floor is None else settings.explore_floor
    barren = {tool for tool, n in store.first_calls().items() if n >= 4 * floor and tool not in seen}
    open_edges = undecided(posteriors, floor=floor, tau=settings.tau_prune, epsilon=settings.epsilon_prune)
    return {e for e in open_edges if e[0] not in barren}


async def run_round(store: GraphStore, paths: PathExecutor, settings: PhaseASettings, round_no: int) -> RoundSummary:
    posteriors = store.posteriors(live_only=True)
    seen = store.inputs_seen()
    sampler = ThompsonSampler(posteriors, epsilon=settings.epsilon_explore,
                              to_test=edges_to_test(store, posteriors, settings, seen))
    jobs = []
    for m in range(settings.trials):
        rng = trial_rng(settings.seed, round_no, m)
        jobs.append(PathJob(tuple(sampler.path(rng, max_edges=settings.max_path_edges)), rng, (round_no, m)))
    results = await paths.run(jobs, seen)
    trials = [t for records, _ in results for t in records]
    updated = dict(posteriors)
    for t in trials:  # in path order: the same updates whatever order the paths finished in
        if t.hop and t.source is not None:
            key = (t.source, t.target)
            updated[key] = updated[key].updated(t.outcome)
    pruned = [k for k, p in sorted(updated.items()) if p.prunable(tau=settings.tau_prune,
                                                                  epsilon=settings.epsilon_prune, n_min=settings.n_min)]
    observations = [(o.tool, o.inputs, o.first_record) for _, observed in results for o in observed]
    sampled = sum(bool(j.path) for j in jobs)
    store.commit_round(round_no, paths=sampled, trials=trials,
                       posteriors={k: p for k, p in updated.items() if p != posteriors[k]}, pruned=pruned,
                       observations=observations)
    edge_trials = [t for t in trials if t.hop]
    return RoundSummary(round_no, sampled, len(trials), len(edge_trials),
                        sum(t.outcome in ("semantic_success", "generic_success") for t in edge_trials), len(pruned),
                        len(posteriors) - len(pruned))


async def build_graph(runtime: ToolRuntime, catalog: Catalog, store: GraphStore, settings: PhaseASettings, *,
                      proposer: Proposer, candidates: Callable[[], Sequence[Any]], concurrency: int = 8,
                      executor: Callable[[Mapping[EdgeKey, Any]], PathExecutor] | None = None,
                      on_round: Callable[[RoundSummary], None] = lambda s: None) -> list[RoundSummary]:
    """Admit the skeleton (first start only), then run the rounds not yet committed.

    ``executor`` makes the path executor from the edges' source plans (``ProcessPaths``, ``RayPaths``);
    by default the paths run on this event loop through ``runtime``.
    """
    if not store.edges():
        admit_skeleton(store, catalog, settings, proposer, candidates())
    plans: dict[EdgeKey, Any] = {e.key: e.plan for e in store.edges()}
    if executor is None:
        paths: PathExecutor = InProcessPaths(PathRunner(runtime, catalog, plans, retries=settings.environmental_retries),
                                             concurrency=concurrency)
    else:
        paths = executor(plans)
    summaries = []
    try:
        for round_no in range(store.next_round(), settings.rounds):
            summary = await run_round(store, paths, settings, round_no)
            summaries.append(summary)
            on_round(summary)
    finally:
        paths.close()
    return summaries
