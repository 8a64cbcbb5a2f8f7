"""The run file: a round is all or nothing, a run reopens where it stopped, configurations are not mixed."""

import pytest

from edge.graph.posterior import EdgePosterior
from edge.graph.store import GraphStore, GraphStoreError, TrialRecord

META = {"bundle": "kopa-default@abc", "seed": 3, "settings": {"rounds": 2}}


def _new(path):
    store = GraphStore.create(path, meta=META)
    store.add_edges([("u", "v", 0.8, False, 0.7, [{"param": "corp_code", "kind": "upstream", "field": "corp_code"}],
                      EdgePosterior.from_feasibility(0.7, kappa=2.0)),
                     ("u", "w", 0.4, True, 0.3, [], EdgePosterior.from_feasibility(0.3, kappa=2.0))])
    return store


def test_a_committed_round_survives_reopening(tmp_path):
    path = tmp_path / "run.duckdb"
    store = _new(path)
    trials = [TrialRecord(0, 0, 0, None, "u", {"corp_name": "삼성"}, "semantic_success"),
              TrialRecord(0, 0, 1, "u", "v", {"corp_code": "00126380"}, "semantic_success", "000", "fp1")]
    post = store.posteriors()
    post[("u", "v")] = post[("u", "v")].updated("semantic_success")
    store.commit_round(0, paths=1, trials=trials, posteriors=post, pruned=[("u", "w")],
                       observations=[("u", {"corp_name": "삼성"}, {"corp_code": "00126380"})])
    store.close()
    again = GraphStore.open(path, expect={"bundle": "kopa-default@abc", "seed": 3})
    assert again.next_round() == 1
    assert again.trials() == trials
    assert set(again.posteriors()) == {("u", "v")}  # the pruned edge is no longer live
    assert again.posteriors()[("u", "v")] == EdgePosterior(3.4, 1.6, trials=1)
    assert [e.pruned_round for e in again.edges()] == [None, 0]  # (u, v) live, (u, w) pruned in round 0
    assert again.observations("u") == [({"corp_name": "삼성"}, {"corp_code": "00126380"})]
    assert again.edges()[0].plan[0]["field"] == "corp_code"


def test_a_failed_round_leaves_nothing_behind(tmp_path):
    store = _new(tmp_path / "run.duckdb")
    before = store.posteriors()
    bad = [TrialRecord(0, 0, 0, None, "u", {}, "semantic_success"), TrialRecord(0, 0, 0, None, "u", {}, "timeout")]
    with pytest.raises(Exception, match="(?i)constraint|duplicate"):  # the same (round, trial, hop) twice
        store.commit_round(0, paths=1, trials=bad, posteriors={k: p.updated("timeout") for k, p in before.items()},
                           pruned=[])
    assert store.next_round() == 0 and store.trials() == [] and store.posteriors() == before


def test_refuses_to_overwrite_or_to_mix_configurations(tmp_path):
    path = tmp_path / "run.duckdb"
    _new(path).close()
    with pytest.raises(GraphStoreError, match="already exists"):
        GraphStore.create(path, meta=META)
    with pytest.raises(GraphStoreError, match="seed: run has 3, asked 4"):
        GraphStore.open(path, expect={"seed": 4})
    with pytest.raises(GraphStoreError, match="no Phase A run"):
        GraphStore.open(tmp_path / "nothing.duckdb")
    (tmp_path / "junk.duckdb").write_bytes(b"not a database")
    with pytest.raises(GraphStoreError, match="not a Phase A run file"):
        GraphStore.open(tmp_path / "junk.duckdb")


_OPEN_IN_ANOTHER_PROCESS = """
import sys
from edge.graph.store import GraphStore, GraphStoreError
try:
    GraphStore.open(sys.argv[1], read_only=sys.argv[2] == "ro").close()
    print("opened")
except GraphStoreError as exc:
    print(exc)
"""


def test_readers_share_a_run_and_a_writer_is_told_it_is_in_use(tmp_path):
    """Synthesis opens the run read-only, so two may read one graph; a process that would write it meanwhile is
    refused with what is wrong (not 'not a run file')."""
    import subprocess
    import sys

    path = tmp_path / "run.duckdb"
    _new(path).close()
    reader = GraphStore.open(path, read_only=True)
    try:
        def other(mode: str) -> str:
            done = subprocess.run([sys.executable, "-c", _OPEN_IN_ANOTHER_PROCESS, str(path), mode],
                                  capture_output=True, text=True, timeout=60)
            return done.stdout.strip()

        assert other("ro") == "opened"
        assert "is in use by another process" in other("rw")
        assert set(reader.posteriors()) == {("u", "v"), ("u", "w")}
    finally:
        reader.close()
