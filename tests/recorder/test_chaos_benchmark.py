"""benchmarks/chaos_record.py at a small size: a real recorder process under hostile faults, SIGKILLed mid-run,
resumed, sealed; nothing acknowledged is lost and every acknowledged call replays identical.

The full run (>= 10,000 calls, >= 5 kills) is on demand: ``python benchmarks/chaos_record.py`` (README).
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO, TEST_DATA_DIR, TEST_SCALE, sandbox_upstream

SCRIPT = REPO / "benchmarks" / "chaos_record.py"
CALLS = REPO / "benchmarks" / "chaos_calls.jsonl"


def test_a_small_chaos_run_loses_nothing_and_replays_identical(tmp_path):
    sandbox_upstream("v1").app()  # the cached test world, built once if missing (the recorder opens it)
    figures = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, str(SCRIPT), "--calls", str(CALLS), "--total", "24", "--clients", "3",
                          "--kills", "1",
                          "--hang-seconds", "0.2", "--seed", "3", "--home", str(TEST_DATA_DIR), "--scale",
                          str(TEST_SCALE), "--keep", str(tmp_path / "work"), "--json", str(figures)],
                         cwd=REPO, capture_output=True, text=True, timeout=600)  # ~20 s quiet; far more on a busy VM
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(figures.read_text())
    assert r["acknowledged"] == 24 and r["attempted"] == 24 + r["resent"]
    assert len(r["kills"]) == 1 and r["kills"][0]["state"] == "interrupted" and r["kills"][0]["journaled"] > 0
    assert r["lost"] == 0 and r["unclassified"] == 0 and r["replay_identical"] == 24
    assert r["versions_verified"] == 1 and r["versions_corrupt"] == [] and r["recovered_at_end"] == []
    assert r["recorded"] >= r["kills"][0]["journaled"] and sum(r["classified"].values()) == 24
    for line in ("calls attempted", "exchanges recorded", "upstream requests retried", "classified (Table 7)",
                 "lost (acknowledged, not replayable)", "replayed identical", "goals: 0 lost met"):
        assert line in run.stdout, f"{line!r} missing from:\n{run.stdout}"
