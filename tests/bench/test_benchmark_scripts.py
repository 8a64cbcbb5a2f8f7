"""The speed scripts of the harness and the gateway run end to end at a tiny size and print their figures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_DATA_DIR, TEST_SCALE

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run(script: str, *args: str, timeout: float = 600) -> str:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=BENCHMARKS.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_harness_benchmark_runs_the_oracle_over_the_shipped_set():
    out = run("bench_harness.py", "--rollouts", "1", "--concurrency", "2")
    assert "oracle over 145 tasks x 1 rollouts x 1 seed(s) = 145 episodes" in out
    assert "pass@1 1.000" in out and re.search(r"whole run \d+\.\d s", out)


def test_gateway_benchmark_prints_every_path_and_both_ratios():
    out = run("gateway_throughput.py", "--calls", "5", "--scale", str(TEST_SCALE), "--home", str(TEST_DATA_DIR))
    for path in ("upstream alone", "gateway in-process", "trivial echo in-memory", "gateway over streamable HTTP",
                 "trivial typed tool over HTTP", "trivial echo over streamable HTTP"):
        assert path in out, out
    assert out.count("(goal <= 2x; raw ratio") == 3


def test_replay_speed_script_replays_the_session_over_both_transports(tmp_path):
    """benchmarks/replay_speed.py --smoke: the 27-call session from the shipped bundle over HTTP and stdio."""
    out = tmp_path / "replay.json"
    printed = run("replay_speed.py", "--smoke", "--json", str(out), timeout=300)
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert [f["transport"] for f in figures] == ["streamable HTTP", "stdio"]
    for f in figures:
        assert len(f["calls"]) == 27 and f["trivial_p50_ms"] > 0
        assert any("find_dart_corp_code" in c["call"] and c["data"] for c in f["calls"])
        assert f"{f['transport']}: data calls' median p50" in printed
    assert printed.count("(goal <= 1.5x:") == 2


def test_the_gpu_serving_script_measures_a_real_server_on_cpu(tmp_path):
    """benchmarks/serving_gpu.py against llama.cpp (the packaged SmolLM2): every part but vLLM's start runs here."""
    out = tmp_path / "serving.json"
    printed = run("serving_gpu.py", "--backend", "llama.cpp", "--concurrency", "1,2", "--requests", "2",
                  "--max-tokens", "4", "--endpoint", "--rounds", "1", "--json", str(out))
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert json.loads(printed) == figures and figures["backend"] == "llama.cpp"
    assert [level["concurrency"] for level in figures["levels"]] == [1, 2]
    for level in figures["levels"]:
        assert 0 < level["ttft_median_ms"] <= level["ttft_p90_ms"]
        assert level["decode_tokens_per_s_median"] > 0 and level["aggregate_output_tokens_per_s"] > 0
    endpoint = figures["endpoint"]  # both orders of a pair were measured, with equal token counts
    assert endpoint["turns"] == 4 and set(endpoint["median_added_ms_by_order"]) == {"direct first", "endpoint first"}


def test_the_gpu_serving_script_refuses_a_missing_model_folder():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "serving_gpu.py"), "--model", "/nowhere"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "no such model folder (this script downloads nothing)" in done.stderr
