"""A small real Phase A run over the sandbox: it learns a good chain, prunes a bad one, is deterministic by
seed and resumes after an interruption exactly where an uninterrupted run would be."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from edge.graph.build import build_graph
from edge.settings import PhaseASettings
from edge.graph.store import GraphStore
from mcp_gateway.gateway import open_gateway
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

GOOD = ("find_dart_corp_code", "get_dart_company_overview")  # corp_code → corp_code
BAD = ("find_dart_corp_code", "search_school_info")  # a corp code fed in as a school code: selects nothing
SETTINGS = PhaseASettings(rounds=4, trials=12, max_path_edges=1, seed=0)


@dataclass(frozen=True)
class Candidate:
    source: str
    target: str
    similarity: float = 0.5
    cross_platform: bool = False


@dataclass(frozen=True)
class Binding:
    feasibility: float
    plan: tuple[dict, ...]


class TableProposer:
    """Fixed binding proposals (the rule and LLM proposers are tested on their own)."""

    TABLE = {GOOD: Binding(0.6, ({"param": "corp_code", "kind": "upstream", "field": "corp_code"},)),
             BAD: Binding(0.6, ({"param": "SD_SCHUL_CODE", "kind": "upstream", "field": "corp_code"},))}

    def propose(self, source, target):
        return self.TABLE.get((source.name, target.name))


async def _run(path: Path, settings: PhaseASettings = SETTINGS, **kw) -> GraphStore:
    gateway = open_gateway(upstream="sandbox", sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="chat")
    store = GraphStore.open(path) if path.exists() else GraphStore.create(path, meta={"seed": settings.seed})
    try:
        await build_graph(gateway.runtime, gateway.catalog, store, settings, proposer=TableProposer(),
                          candidates=lambda: [Candidate(*GOOD), Candidate(*BAD)], **kw)
    finally:
        await gateway.aclose()
    return store


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> GraphStore:
    return asyncio.run(_run(tmp_path_factory.mktemp("phase-a") / "run.duckdb"))


def test_the_good_chain_is_learned_and_the_bad_one_pruned(finished):
    edges = {e.key: e for e in finished.edges()}
    good, bad = edges[GOOD], edges[BAD]
    assert good.pruned_round is None and good.posterior.trials >= 2
    assert good.posterior.mean > good.prior.mean  # successes raised it above its prior
    assert bad.pruned_round is not None and bad.posterior.mean < bad.prior.mean
    outcomes = {(t.source, t.target): set() for t in finished.trials() if t.hop}
    for t in finished.trials():
        if t.hop:
            outcomes[(t.source, t.target)].add(t.outcome)
    assert outcomes[GOOD] == {"semantic_success"}
    assert outcomes[BAD] == {"missing_field"}  # answered, but the bound value selected no school
    assert set(finished.posteriors()) == {GOOD}  # the refined graph G*
    # each executed edge trial fed the real first record of find_dart_corp_code into the next call
    first = next(t for t in finished.trials() if t.hop == 1 and (t.source, t.target) == GOOD)
    assert len(first.inputs["corp_code"]) == 8 and first.fingerprint.endswith(f"corp_code={first.inputs['corp_code']}")
    assert finished.inputs_seen()["find_dart_corp_code"] == [{}]


def test_the_same_seed_gives_the_same_run(finished, tmp_path):
    again = asyncio.run(_run(tmp_path / "again.duckdb", concurrency=3))
    assert again.trials() == finished.trials()
    assert again.posteriors(live_only=False) == finished.posteriors(live_only=False)
    other = asyncio.run(_run(tmp_path / "other.duckdb", PhaseASettings(rounds=4, trials=12, max_path_edges=1, seed=9)))
    assert other.trials() != finished.trials()


def test_an_interrupted_run_resumes_to_the_same_graph(finished, tmp_path):
    path = tmp_path / "interrupted.duckdb"

    async def interrupted() -> None:
        done = asyncio.Event()

        def after(summary) -> None:
            if summary.round == 1:
                done.set()
        task = asyncio.create_task(_run(path, on_round=after))
        await done.wait()
        await asyncio.sleep(0)  # round 2 has started: cancel it in the middle, as Ctrl-C or a kill would
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    partial = GraphStore.open(path)
    assert partial.next_round() == 2  # rounds 0 and 1 committed, nothing of round 2
    partial.close()
    resumed = asyncio.run(_run(path))
    assert resumed.next_round() == SETTINGS.rounds
    assert resumed.trials() == finished.trials()
    assert resumed.posteriors(live_only=False) == finished.posteriors(live_only=False)
