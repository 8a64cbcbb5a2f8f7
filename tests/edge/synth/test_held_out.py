"""Held-out platforms (Table 14): `kopa edge synth --exclude-platform` leaves no call on them, an unknown id is
refused naming the known ones, and Table 13's audit reports the bench tasks on them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from edge.dataset.items_io import read_items
from edge.graph.store import GraphStore
from edge.synth.platforms import held_out_platforms
from edge.synth.walk import LiveGraph
from mcp_gateway.catalog import load_catalog
from tests.edge.synth.conftest import ENV

CATALOG = load_catalog()


def _platforms(graph: LiveGraph) -> set[str]:
    tools = {*graph.starts, *graph.inputs, *(e.target for es in graph.outgoing.values() for e in es)}
    return {CATALOG.get(t).platform for t in tools}


def test_the_live_graph_loses_every_tool_of_a_held_out_platform(graph_path):
    store = GraphStore.open(graph_path, read_only=True)
    try:
        whole = LiveGraph.from_store(store, CATALOG)
        without = LiveGraph.from_store(store, CATALOG, exclude_platforms=("ex",))
    finally:
        store.close()
    assert "ex" in _platforms(whole) and "ex" not in _platforms(without) and _platforms(without)


def test_an_unknown_platform_is_an_error_naming_the_known_ones(graph_path, tmp_path):
    with pytest.raises(ValueError, match="known: assembly, dart, edu, ex, gg"):
        held_out_platforms(["ex", "expressway"])
    assert held_out_platforms(["law", "ex", "law"]) == ("ex", "law")
    done = CliRunner().invoke(app, ["edge", "synth", "--graph", str(graph_path), "-n", "2", "--out",
                                    str(tmp_path / "data"), "--exclude-platform", "expressway"], env=ENV)
    assert done.exit_code != 0 and "'expressway'" in done.output and "known: assembly, dart" in done.output
    assert not (tmp_path / "data").exists()


@pytest.fixture(scope="module")
def held_out_dataset(graph_path, tmp_path_factory):
    root = tmp_path_factory.mktemp("edge-held-out")
    env = {**ENV, "KOPA_RECORDER__CASSETTES": str(root / "cassettes")}
    folder = root / "data"
    done = CliRunner().invoke(app, ["edge", "synth", "--graph", str(graph_path), "-n", "8", "--seed", "5",
                                    "--out", str(folder), "--exclude-platform", "ex"], env=env)
    assert done.exit_code == 0, (done.output, done.exception)
    return folder, env


def test_synth_excluding_a_platform_makes_no_call_on_it(held_out_dataset):
    folder, _ = held_out_dataset
    items = read_items(folder / "items.jsonl")
    assert items
    called = {CATALOG.get(a.tool).platform for i in items for a in i.task.golden_actions}
    assert "ex" not in called and "ex" not in {p for i in items for p in i.task.platforms}
    assert json.loads((folder / "synth.json").read_text())["excluded_platforms"] == ["ex"]


def test_table_13_reports_the_held_out_bench_tasks(held_out_dataset):
    folder, env = held_out_dataset
    done = CliRunner().invoke(app, ["edge", "stats", str(folder), "--json"], env=env)
    assert done.exit_code == 0, done.output
    table = json.loads(done.stdout)["table_13"]
    assert table["held_out"] == ["ex"] and table["held_out_items"] == []
    assert len(table["held_out_tasks"]) == 13  # KOPA-Bench's 13 tasks on the expressway platform
    assert set(table["held_out_only_tasks"]) <= set(table["held_out_tasks"])
