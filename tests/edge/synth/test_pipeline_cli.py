"""`kopa edge synth → filter → export → stats` over the small Phase A graph: every file the pipeline promises,
counts that add up, and no step that writes over an earlier one."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from appliance.cli import app
from edge.dataset.items_io import read_items, read_rejections
from tests.edge.synth.conftest import ENV


@pytest.fixture(scope="module")
def dataset(graph_path, tmp_path_factory):
    root = tmp_path_factory.mktemp("edge-pipeline")
    env = {**ENV, "KOPA_RECORDER__CASSETTES": str(root / "cassettes")}
    folder = root / "data"
    runner = CliRunner()
    for args in (["synth", "--graph", str(graph_path), "-n", "12", "--seed", "3", "--out", str(folder)],
                 ["filter", str(folder), "--no-embeddings"], ["export", str(folder)]):
        done = runner.invoke(app, ["edge", *args], env=env)
        assert done.exit_code == 0, (args, done.output, done.exception)
    return folder, env


def test_the_pipeline_writes_every_file_and_its_counts_add_up(dataset):
    folder, _ = dataset
    items, kept = read_items(folder / "items.jsonl"), read_items(folder / "kept.jsonl")
    rejections = read_rejections(folder / "rejections.jsonl")
    assert items and kept and len(kept) + len(rejections) == len(items)
    funnel = json.loads((folder / "funnel.json").read_text())["counts"]
    assert funnel["validity"]["in"] == len(items) and funnel["contamination"]["out"] == len(kept)
    assert all(funnel[a]["out"] == funnel[b]["in"] for a, b in zip(list(funnel), list(funnel)[1:]))
    table = pq.read_table(folder / "train.parquet").to_pylist()
    assert sorted(json.loads(r["extra_info"])["item_id"] for r in table) == sorted(i.task.id for i in kept)
    sft = (folder / "sft.jsonl").read_text().splitlines()
    assert len(sft) == len(kept) and all(json.loads(line)["messages"][-1]["role"] == "assistant" for line in sft)
    synth = json.loads((folder / "synth.json").read_text())
    assert synth["items"] == len(items) and synth["bundle"] == items[0].task.bundle


def test_stats_prints_the_tables_beside_the_paper(dataset):
    folder, env = dataset
    done = CliRunner().invoke(app, ["edge", "stats", str(folder), "--json"], env=env)
    assert done.exit_code == 0, done.output
    figures = json.loads(done.stdout)
    assert figures["filtered"] is True and figures["items"] == len(read_items(folder / "kept.jsonl"))
    assert sum(figures["tables_10_12"]["type_counts"].values()) == figures["items"]
    assert figures["funnel"]["validity"]["in"] == len(read_items(folder / "items.jsonl"))


def _plain(output: str) -> str:
    """A CLI error as one line: the error box's borders and line breaks gone (rich wraps the message to the width
    of the first console a process made, which depends on which tests ran before in that worker)."""
    return " ".join(output.replace("│", " ").split())


def test_no_step_writes_over_an_earlier_one(dataset, graph_path):
    folder, env = dataset
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    runner = CliRunner()
    again = runner.invoke(app, ["edge", "synth", "--graph", str(graph_path), "-n", "2", "--out", str(folder)], env=env)
    assert again.exit_code != 0 and "already holds a synthesis run" in _plain(again.output)
    refilter = runner.invoke(app, ["edge", "filter", str(folder), "--no-embeddings"], env=env)
    assert refilter.exit_code != 0 and "filtered already" in _plain(refilter.output)
    reexport = runner.invoke(app, ["edge", "export", str(folder)], env=env)
    assert reexport.exit_code != 0 and "exists" in str(reexport.exception)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
