"""Issue 25's depth: a chain of four junctions through a DRV and a FAN junction, synthesized on a small graph.

The assembly's tools chain a bill's vote list → one member's vote (DRV) → that member's record → the bills they
sponsored → each bill's detail (FAN, where the member sponsored 2..φ bills: 12 of the world's 301 members). The
graph is a real Phase A run over those five tools (~8 s); synthesis asks for MIXED items only, seed after seed,
until one crosses the four junctions (1–2 in 20 items for each of seeds 1–5).
"""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from bench.agents import OracleAgent
from bench.episode import run_episode
from edge.synth.answer import recompute
from edge.synth.item import JunctionType, TaskType
from edge.synth.validity import replay_records

from .conftest import ENV, replay_gateway, synthesize_into

CHAIN = ["get_bill_vote_results", "get_member_votes_on_bill", "get_all_assembly_member_history",
         "search_member_sponsored_bills", "get_bill_detail"]


def _deep(item) -> bool:
    types = {j.type for j in item.junctions}
    return len(item.junctions) >= 4 and {JunctionType.DRV, JunctionType.FAN} <= types


def _selected_in_each_branch(item):
    """The DRV junction crossed by every branch of an earlier fan-out (its source called in parallel, its target once
    per branch at one step, each with the one value its branch's selection kept), or None."""
    def parallel(tool: str) -> list[int]:
        steps = [a.step for a in item.task.golden_actions if a.tool == tool]
        return steps if len(steps) >= 2 and len(set(steps)) == 1 else []

    for k, j in enumerate(item.junctions):
        if k and j.type is JunctionType.DRV and j.operator in ("max", "min", "latest", "earliest", "most_frequent") \
                and item.junctions[k - 1].target == j.source and parallel(j.source) and parallel(j.target):
            return j
    return None


@pytest.fixture(scope="module")
def mixed_runs(tmp_path_factory):
    """Seed → (20 MIXED items synthesized on the chain's graph, their cassette folder), made when first asked."""
    graph = tmp_path_factory.mktemp("deep-graph") / "graph.duckdb"
    built = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "4", "--trials", "60", "--run", str(graph),
                                     *[f"--tool={t}" for t in CHAIN]], env=ENV)
    assert built.exit_code == 0, built.output
    made: dict[int, tuple] = {}

    def run(seed: int) -> tuple:
        if seed not in made:
            cassettes = tmp_path_factory.mktemp(f"deep-{seed}")
            done = synthesize_into(graph, cassettes, n=20, seed=seed, type_mix={TaskType.MIXED: 1.0})
            made[seed] = done.items, cassettes
        return made[seed]
    return run


def _first(mixed_runs, wanted, what: str):
    for seed in range(1, 6):
        items, cassettes = mixed_runs(seed)
        if found := next((i for i in items if wanted(i)), None):
            return found, cassettes
    pytest.fail(f"no item {what} in 5 seeds × 20 MIXED items")


@pytest.fixture(scope="module")
def deep_item(mixed_runs):
    """(the first item crossing ≥ 4 junctions through a DRV and a FAN, the cassette folder of its bundle)."""
    return _first(mixed_runs, _deep, "crossed four junctions through a DRV and a FAN")


def _replayed(item, cassettes):
    async def run():
        gateway = replay_gateway(cassettes, item.task.bundle)
        try:
            return await replay_records(item, gateway), await run_episode(item.task, OracleAgent(), gateway, seed=0)
        finally:
            await gateway.aclose()

    return asyncio.run(run())


def test_a_selection_in_each_branch_of_a_fan_out_goes_on_and_replays(mixed_runs):
    """Past a fan-out whose branches each carry more than φ values (each member's sponsored bills), one selection
    keeps one value per branch (each member's bill referred earliest or latest; the largest, smallest or most
    frequent) and the chain goes on from every branch: a DRV junction in the middle of a chain."""
    item, cassettes = _first(mixed_runs, _selected_in_each_branch, "selecting one value in each branch")
    j = _selected_in_each_branch(item)
    assert j.cardinality > 5  # typed by its widest branch
    sent = [a.args[j.param] for a in item.task.golden_actions if a.tool == j.target]
    assert len(sent) == len(set(map(str, sent)))  # one value per branch, no branch twice
    assert any(w in item.task.query for w in ("각각 그중", "각각 가장", "각자", "그 각각에서")), item.task.query
    (records, failure), outcome = _replayed(item, cassettes)
    assert failure is None
    assert recompute(item.recipe, records) == item.task.accepted_answers[0]
    assert outcome.passed and outcome.action.action == 1.0, outcome.error


def test_a_four_junction_chain_through_drv_and_fan_replays_and_recomputes(deep_item):
    item, cassettes = deep_item
    tools = [j.source for j in item.junctions] + [item.junctions[-1].target]
    assert tools == CHAIN
    fan = next(j for j in item.junctions if j.type is JunctionType.FAN)
    assert 2 <= fan.cardinality <= 5
    data_calls = [a for a in item.task.golden_actions if a.tool in CHAIN]
    assert len(data_calls) >= 4 + fan.cardinality  # one call per hop, the fan-out's branches each called
    fanned = [a.step for a in data_calls if a.tool == fan.target]
    assert len(fanned) == fan.cardinality and len(set(fanned)) == 1  # the branches are one parallel step

    (records, failure), outcome = _replayed(item, cassettes)
    assert failure is None
    assert recompute(item.recipe, records) == item.task.accepted_answers[0]
    assert outcome.passed and outcome.action.action == 1.0, outcome.error


def _fanned_in_each_branch(item):
    """The junction crossed by every branch of an earlier fan-out (its source called in parallel) where each branch
    called the target once per value it carried (more target calls than source calls, at one step), or None."""
    for k, j in enumerate(item.junctions):
        sources = [a.step for a in item.task.golden_actions if a.tool == j.source]
        targets = [a.step for a in item.task.golden_actions if a.tool == j.target]
        if k and item.junctions[k - 1].target == j.source and len(sources) >= 2 and len(set(sources)) == 1 \
                and len(targets) > len(sources) and len(set(targets)) == 1:
            return j
    return None


def test_a_fan_out_inside_each_branch_of_a_fan_out_replays_and_is_summed(mixed_runs):
    """Past a fan-out, where each branch keeps a few values (2..φ of its own, or what a threshold keeps of more:
    "each member's votes cast …"), every value of every branch is called at one parallel step, and the chain ends in
    their sum: a CMP over a branch within a branch would answer a compound label."""
    item, cassettes = _first(mixed_runs, _fanned_in_each_branch, "fanning out inside each branch")
    j = _fanned_in_each_branch(item)
    calls = [a for a in item.task.golden_actions if a.tool == j.target]
    sent = [str(a.args[j.param]) for a in calls]
    assert len(sent) == len(set(sent)) and len({a.step for a in calls}) == 1  # each value once, one parallel step
    assert any(w in item.task.query for w in ("마다", "별 ", "하나하나")), item.task.query
    assert item.recipe["op"] != "compare"
    (records, failure), outcome = _replayed(item, cassettes)
    assert failure is None
    assert recompute(item.recipe, records) == item.task.accepted_answers[0]
    assert outcome.passed and outcome.action.action == 1.0, outcome.error
