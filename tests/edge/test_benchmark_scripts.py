"""benchmarks/edge_phase_a.py and edge_phase_b.py run end to end at a tiny size and print the figures they promise.

The figures themselves are measured on demand (docs/benchmarks.md); this only keeps the scripts working with the code
they drive: Phase A's script once called ``build_skeleton`` with an argument the function no longer took.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_DATA_DIR, TEST_SCALE

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args, "--home", str(TEST_DATA_DIR),
                           "--scale", str(TEST_SCALE)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def phase_a(tmp_path_factory) -> tuple[str, Path]:
    keep = tmp_path_factory.mktemp("phase-a")
    out = _run("edge_phase_a.py", "--fractions", "0.01", "--rounds", "2", "--trials", "30", "--workers", "1",
               "--heldout", "1", "--heldout-edges", "20", "--keep", str(keep))
    return out, keep / "run-0.01.duckdb"


def test_phase_a_prints_the_run_and_the_held_out_success_of_each_set(phase_a):
    out, run = phase_a
    assert "1% of 2,416 tools: skeleton" in out and "2 rounds x 30 paths" in out, out
    assert "edges tried 0 / 1 / >= n_min" in out
    for name in ("skeleton", "G*", "pruned"):
        assert f"held-out {name}" in out, out
    assert run.is_file()


def test_phase_b_synthesizes_over_the_kept_run(phase_a):
    _, run = phase_a
    out = _run("edge_phase_b.py", "--graph", str(run), "-n", "4", "--workers", "1")
    assert "items for 4 asked" in out and "filter:" in out, out
