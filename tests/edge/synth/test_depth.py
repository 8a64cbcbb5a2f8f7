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


@pytest.fixture(scope="module")
def deep_item(tmp_path_factory):
    """(the first item crossing ≥ 4 junctions through a DRV and a FAN, the cassette folder of its bundle)."""
    graph = tmp_path_factory.mktemp("deep-graph") / "graph.duckdb"
    built = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "4", "--trials", "60", "--run", str(graph),
                                     *[f"--tool={t}" for t in CHAIN]], env=ENV)
    assert built.exit_code == 0, built.output
    for seed in range(1, 6):
        cassettes = tmp_path_factory.mktemp(f"deep-{seed}")
        done = synthesize_into(graph, cassettes, n=20, seed=seed, type_mix={TaskType.MIXED: 1.0})
        if found := next((i for i in done.items if _deep(i)), None):
            return found, cassettes
    pytest.fail("no item crossed four junctions through a DRV and a FAN in 5 seeds × 20 MIXED items")


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

    async def run():
        gateway = replay_gateway(cassettes, item.task.bundle)
        try:
            return await replay_records(item, gateway), await run_episode(item.task, OracleAgent(), gateway, seed=0)
        finally:
            await gateway.aclose()

    (records, failure), outcome = asyncio.run(run())
    assert failure is None
    assert recompute(item.recipe, records) == item.task.accepted_answers[0]
    assert outcome.passed and outcome.action.action == 1.0, outcome.error
