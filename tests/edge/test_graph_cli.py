"""`kopa edge graph build | stats | show` in-process over the sandbox world the other tests use."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from edge.graph.store import GraphStore
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

ENV = {"KOPA_HOME": str(TEST_DATA_DIR), "KOPA_SANDBOX__SCALE": str(TEST_SCALE), "COLUMNS": "200"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("edge-cli") / "graph.duckdb"
    done = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "2", "--trials", "20", "--run", str(path)],
                              env=ENV)
    assert done.exit_code == 0, done.output
    assert "edges admitted" in done.stdout and str(path) in done.stdout.replace("\n", "")
    return path


def test_build_writes_a_resumable_run_of_the_full_catalog(run):
    store = GraphStore.open(run)
    try:
        assert store.next_round() == 2
        edges = store.edges()
        assert len(edges) > 10_000  # the skeleton over all 2,416 tools, as admitted by the rule proposer
        assert any(e.key == ("find_dart_corp_code", "get_dart_company_overview") for e in edges)
        assert store.meta()["upstream"] == "sandbox" and store.meta()["seed"] == 0
        assert sum(r[2] for r in store.rounds()) > 20
    finally:
        store.close()
    # giving the finished run again with more rounds resumes it: rounds 0-1 are kept, round 2 is added
    more = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "3", "--trials", "20", "--run", str(run)],
                              env=ENV)
    assert more.exit_code == 0, more.output
    store = GraphStore.open(run)
    assert store.next_round() == 3 and [r[0] for r in store.rounds()] == [0, 1, 2]
    store.close()


def test_stats_and_show(run, tmp_path):
    stats = CliRunner().invoke(app, ["edge", "graph", "stats", str(run), "--heldout", "1", "--sample", "10", "--json",
                                     "--plots", str(tmp_path)], env=ENV)
    assert stats.exit_code == 0, stats.output
    figures = json.loads(stats.stdout)
    assert figures["admitted"] == figures["live"] + figures["pruned"]
    assert figures["heldout"]["skeleton"]["edges"] == 10 and figures["heldout"]["skeleton"]["paper"] == 0.502
    assert 0 <= figures["heldout"]["skeleton"]["rate"] <= 1
    # the run's own Figures 4, 6, 7: the rounds as stored, the held-out rate among Figure 4's bars, the plots beside
    store = GraphStore.open(run, read_only=True)
    rounds = store.rounds()
    store.close()
    assert figures["figure_6"]["round"] == [r[0] for r in rounds]
    assert figures["figure_6"]["calls"] == [r[2] for r in rounds]
    assert figures["figure_4"]["success"]["skeleton"]["heldout"] == figures["heldout"]["skeleton"]["rate"]
    assert json.loads((tmp_path / "stats.json").read_text(encoding="utf-8")) == figures
    assert all((tmp_path / f"figure-{n}.svg").stat().st_size > 0 for n in (4, 6, 7))
    shown = CliRunner().invoke(app, ["edge", "graph", "show", "find_dart_corp_code", "--run", str(run), "--json"],
                               env=ENV)
    assert shown.exit_code == 0, shown.output
    edges = {(e["source"], e["target"]): e for e in json.loads(shown.stdout)}
    overview = edges[("find_dart_corp_code", "get_dart_company_overview")]
    assert {"param": "corp_code", "kind": "upstream", "field": "corp_code"}.items() <= overview["plan"][0].items()
    assert overview["alpha"] > 0 and overview["trials"] >= 0
    assert all("find_dart_corp_code" in key for key in edges)
    table = CliRunner().invoke(app, ["edge", "graph", "show", "find_dart_corp_code", "--run", str(run)], env=ENV)
    assert table.exit_code == 0 and "edges of find_dart_corp_code" in table.stdout


def test_bad_input_is_one_clear_error(run, tmp_path):
    runner = CliRunner()
    other_seed = runner.invoke(app, ["edge", "graph", "build", "--rounds", "3", "--seed", "5", "--run", str(run)],
                               env=ENV)
    assert other_seed.exit_code != 0 and "belongs to another configuration" in str(other_seed.exception)
    bad = runner.invoke(app, ["edge", "graph", "build", "--trials", "0", "--run", str(tmp_path / "x.duckdb")], env=ENV)
    assert bad.exit_code != 0 and "trials" in str(bad.exception)
    missing = runner.invoke(app, ["edge", "graph", "build", "--bundle", "no-such-bundle", "--rounds", "1",
                                  "--run", str(tmp_path / "y.duckdb")], env=ENV)
    assert missing.exit_code != 0 and "no-such-bundle" in str(missing.exception)
    unknown = runner.invoke(app, ["edge", "graph", "show", "find_dart_corp_cod", "--run", str(run)], env=ENV)
    assert unknown.exit_code != 0 and "find_dart_corp_code" in str(unknown.exception)


DART = ["find_dart_corp_code", "get_dart_company_overview", "get_dart_convertible_bond_issuance_decision",
        "get_dart_single_company_key_accounts", "search_dart_disclosures"]


def test_worker_processes_build_the_same_run_as_one_process(tmp_path, monkeypatch):
    """`--workers 2` runs the paths in two processes with their own runtimes: the run is the same, call for call.
    So is a run whose sandbox answers are not memoized (the memo only saves asking the world again)."""
    import sandbox.memo

    memos: list[sandbox.memo.MemoTransport] = []
    made = sandbox.memo.MemoTransport.__init__

    def spied(self, *args, **kwargs):
        made(self, *args, **kwargs)
        memos.append(self)

    monkeypatch.setattr(sandbox.memo.MemoTransport, "__init__", spied)

    def build(name: str, workers: int) -> tuple:
        path = tmp_path / f"{name}.duckdb"
        done = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "2", "--trials", "16", "--run", str(path),
                                        "--workers", str(workers), *[f"--tool={t}" for t in DART]], env=ENV)
        assert done.exit_code == 0, done.output
        store = GraphStore.open(path)
        try:
            return store.trials(), store.posteriors(live_only=False)
        finally:
            store.close()

    runs = {workers: build(f"workers-{workers}", workers) for workers in (1, 2)}
    assert len(runs[1][0]) > 16 and any(t.hop for t in runs[1][0])
    assert runs[2] == runs[1]
    assert memos and sum(m.hits for m in memos) > 0  # this process's gateway answered repeats from its memo
    monkeypatch.setattr(sandbox.memo, "REPEAT_CALLERS_MEMO_BYTES", 0)
    assert build("unmemoized", 1) == runs[1]
    both = CliRunner().invoke(app, ["edge", "graph", "build", "--workers", "2", "--ray", "local",
                                    "--run", str(tmp_path / "z.duckdb")], env=ENV)
    assert both.exit_code != 0 and "--workers or --ray" in both.output


def test_edge_settings_of_kopa_toml_reach_phase_a_and_the_environment_wins(tmp_path):
    config = tmp_path / "kopa.toml"
    config.write_text("[edge]\nrounds = 1\ntrials = 4\nk_intra = 3\nk_cross = 0\nseed = 5\n", encoding="utf-8")
    path = tmp_path / "graph.duckdb"
    tools = ["--tool", "find_dart_corp_code", "--tool", "get_dart_company_overview"]
    done = CliRunner().invoke(app, ["edge", "graph", "build", "--run", str(path), *tools],
                              env=ENV | {"KOPA_CONFIG": str(config), "KOPA_EDGE__TRIALS": "6"})
    assert done.exit_code == 0, done.output
    store = GraphStore.open(path)
    try:
        meta = store.meta()
        assert meta["seed"] == 5 and store.next_round() == 1  # [edge] seed and rounds
        assert (meta["settings"]["k_intra"], meta["settings"]["k_cross"]) == (3, 0)
        assert meta["settings"]["trials"] == 6  # KOPA_EDGE__TRIALS over the file's 4
    finally:
        store.close()
