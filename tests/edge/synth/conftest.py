"""A small real Phase A run (rest areas, bills, DART: 26 tools of 3 platforms) and items synthesized over it.

Both are session-scoped: the graph takes ~5 s, a synthesis of ``N_ITEMS`` items ~6 s on 2 cores. The items are
made as ``kopa edge synth`` makes them: screened by the filter's rules, so their quotas count survivors.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from bench.task import load_tasks
from bench.taskset.build import DEFAULT_TASKS, open_recording_gateway, open_sandbox_gateway
from edge.filter.contamination import ContaminationAudit
from edge.filter.screen import Screen
from edge.graph.store import GraphStore
from edge.synth.build import RECORDED_AT, SynthesisRun, synthesize
from mcp_gateway.gateway import open_gateway
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

ENV = {"KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), "COLUMNS": "200"}
TOOLS = [
    "find_dart_corp_code", "get_dart_company_overview", "get_dart_convertible_bond_issuance_decision",
    "get_dart_single_company_key_accounts", "search_dart_disclosures",
    "get_all_assembly_member_history", "get_bill_detail", "get_bill_vote_results", "get_member_votes_on_bill",
    "get_national_assembly_members", "list_assembly_committees", "list_committee_members", "search_all_bills",
    "search_committee_minutes", "search_member_sponsored_bills", "search_plenary_minutes",
    "get_rest_area_best_foods", "get_rest_area_brands", "get_rest_area_conveniences", "get_rest_area_fuel_prices",
    "get_rest_area_oil_list", "get_tollbooth_traffic_volume", "list_rest_area_locations", "list_tollbooths",
]
N_ITEMS = 16
SEED = 0


@pytest.fixture(scope="session")
def graph_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("synth-graph") / "graph.duckdb"
    done = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "2", "--trials", "16", "--run", str(path),
                                    *[f"--tool={t}" for t in TOOLS]], env=ENV)
    assert done.exit_code == 0, done.output
    return path


BENCH_TASKS = load_tasks(DEFAULT_TASKS)
EXPLORE = partial(open_sandbox_gateway, TEST_DATA_DIR, scale=TEST_SCALE)


def synthesize_into(graph_path: Path, cassettes: Path, n: int = N_ITEMS, seed: int = SEED, *, screen: bool = True,
                    workers: int = 1, seen: dict | None = None, **options) -> SynthesisRun:
    """A synthesis recorded into ``cassettes``, screened by the filter's rules (as ``kopa edge synth`` does);
    ``seen["recorded_here"]``: the exchanges the recording gateway's own calls recorded."""
    async def run():
        store = GraphStore.open(graph_path, read_only=True)
        gateway = open_recording_gateway(TEST_DATA_DIR, cassettes, "edge-synth", scale=TEST_SCALE, stamp=RECORDED_AT)
        screening = Screen(catalog=gateway.catalog, audit=ContaminationAudit(BENCH_TASKS)) if screen else None
        try:
            return await synthesize(store, gateway, n, seed, explore=EXPLORE, screen=screening, workers=workers,
                                    **options)
        finally:
            if seen is not None:
                seen["recorded_here"] = gateway.transport.stats.recorded
            await gateway.aclose()
            store.close()
    return asyncio.run(run())


@pytest.fixture(scope="session")
def synthesized(graph_path, tmp_path_factory):
    """(items, abandoned reasons, the cassette folder their bundle is in, the SynthesisRun)."""
    cassettes = tmp_path_factory.mktemp("synth-cassettes")
    done = synthesize_into(graph_path, cassettes)
    assert done.items, f"nothing synthesized; abandoned: {done.abandoned.most_common(10)}"
    return done.items, done.abandoned, cassettes, done


def replay_gateway(cassettes: Path, bundle: str):
    return open_gateway(upstream="replay", profile="bench", home=cassettes, cassettes=cassettes, bundle=bundle)
