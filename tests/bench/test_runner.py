"""Benchmark runs: every episode written and summarised, replay pinned to one bundle, resume, the CLI.

The runs replay the bundle that tests/bench/conftest.py records from the oracle over the episode tasks;
the task file is rewritten to pin that recorded version (``pinned`` in conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.agents import FirstPageAgent, OracleAgent
from bench.runner import (
    EPISODES_FILE,
    RUN_FILE,
    open_bench_gateway,
    read_episodes,
    run_benchmark,
    run_bundle,
    summary_json,
)
from bench.task import load_tasks
from tests.bench.conftest import BUNDLE
from tests.conftest import TEST_DATA_DIR, TEST_SCALE

REPO = Path(__file__).resolve().parents[2]


async def _run(pinned, agent, out_dir: Path, **options):
    cassettes, tasks_file, ref = pinned
    tasks = load_tasks(tasks_file)
    async with open_bench_gateway(ref, home=TEST_DATA_DIR, cassettes=cassettes) as gateway:
        return await run_benchmark(tasks, agent, gateway, out_dir=out_dir, tasks_file=tasks_file,
                                   **{"rollouts": 2, "seeds": [0, 1], **options})


def _without_durations(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("duration_s")
    return lines


async def test_the_oracle_passes_every_episode_and_the_run_is_written(pinned, tmp_path):
    seen: list[tuple[int, int]] = []
    run = await _run(pinned, OracleAgent(), tmp_path / "run", concurrency=3,
                     progress=lambda done, total, outcome: seen.append((done, total)))

    n = 6 * 2 * 2  # tasks × seeds × rollouts
    assert (run.ran, run.skipped, run.errors) == (n, 0, [])
    assert run.summary.pass_at == {1: 1.0, 2: 1.0}
    assert run.summary.n_episodes == n and run.summary.action is not None and run.summary.action > 0.9
    assert run.summary.seed_ci is not None and run.summary.seed_ci.n == 2
    assert seen[0] == (0, n) and seen[-1] == (n, n) and len(seen) == n + 1

    lines = [json.loads(x) for x in (tmp_path / "run" / EPISODES_FILE).read_text(encoding="utf-8").splitlines()]
    keys = [(x["task_id"], x["seed"], x["rollout"]) for x in lines]
    assert keys == sorted(keys) and len(set(keys)) == n  # every episode once, in key order
    assert all(x["transcript"] and x["scores"]["passed"] for x in lines)

    written = json.loads((tmp_path / "run" / RUN_FILE).read_text(encoding="utf-8"))
    config = written["config"]
    assert config["agent"] == "oracle" and config["bundle"] == pinned[2] and config["upstream"] == "replay"
    assert config["seeds"] == [0, 1] and config["rollouts"] == 2 and config["upstream_source"] == f"replay {pinned[2]}"
    assert config["tasks_sha256"] == hashlib.sha256(pinned[1].read_bytes()).hexdigest()
    assert written["complete"] and written["started_at"] and written["finished_at"]
    assert written["summary"] == summary_json(run.summary)
    assert written["summary"]["pass_at"] == {"1": 1.0, "2": 1.0}


async def test_first_page_passes_exactly_the_tasks_that_do_not_page(pinned, tmp_path):
    run = await _run(pinned, FirstPageAgent, tmp_path / "run")  # a class: one agent per episode
    assert run.config.agent == "first-page"
    tasks = load_tasks(pinned[1])
    assert run.summary.pass_at[1] == pytest.approx(sum(not t.pages for t in tasks) / len(tasks))
    for line in run.episodes:
        task = next(t for t in tasks if t.id == line["task_id"])
        assert line["scores"]["passed"] is (not task.pages), line["task_id"]


async def test_two_runs_with_the_same_seeds_are_identical_whatever_the_concurrency(pinned, tmp_path):
    one = await _run(pinned, OracleAgent(), tmp_path / "one", concurrency=1)
    many = await _run(pinned, FirstPageAgent(), tmp_path / "many-fp", concurrency=5)  # a different agent differs
    again = await _run(pinned, OracleAgent(), tmp_path / "again", concurrency=5)

    assert _without_durations(tmp_path / "one" / EPISODES_FILE) == _without_durations(tmp_path / "again" / EPISODES_FILE)
    assert summary_json(one.summary) == summary_json(again.summary)
    assert summary_json(one.summary) != summary_json(many.summary)


async def test_an_interrupted_run_resumes_with_only_the_missing_episodes(pinned, tmp_path):
    full = await _run(pinned, OracleAgent(), tmp_path / "full")

    out = tmp_path / "cut"
    await _run(pinned, OracleAgent(), out)
    kept = (out / EPISODES_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    # the run died after 5 episodes, in the middle of writing the sixth
    (out / EPISODES_FILE).write_text("".join(kept[:5]) + kept[5][:40], encoding="utf-8")
    assert len(read_episodes(out / EPISODES_FILE)) == 5

    started: list[str] = []

    def counting_oracle() -> OracleAgent:
        started.append("episode")
        return OracleAgent()

    resumed = await _run(pinned, counting_oracle, out)
    assert (resumed.ran, resumed.skipped) == (len(kept) - 5, 5)
    assert len(started) == resumed.ran + 1  # one more call names the agent for run.json
    assert summary_json(resumed.summary) == summary_json(full.summary)
    assert _without_durations(out / EPISODES_FILE) == _without_durations(tmp_path / "full" / EPISODES_FILE)

    again = await _run(pinned, OracleAgent(), out)  # nothing left to do
    assert (again.ran, again.skipped) == (0, len(kept))


async def test_a_run_directory_of_another_configuration_is_refused(pinned, tmp_path):
    await _run(pinned, OracleAgent(), tmp_path / "run", seeds=[0], rollouts=1)
    with pytest.raises(ValueError, match="agent='oracle'"):
        await _run(pinned, FirstPageAgent(), tmp_path / "run", seeds=[0], rollouts=1)
    with pytest.raises(ValueError, match="already holds episodes"):
        await _run(pinned, OracleAgent(), tmp_path / "run", seeds=[0], rollouts=1, resume=False)


def test_tasks_pinned_to_two_bundles_are_refused(pinned):
    tasks = load_tasks(pinned[1])
    other = tasks[0].model_copy(update={"bundle": "other-bundle@v1"})
    with pytest.raises(ValueError, match=r"2 cassette bundles.*other-bundle@v1 \(1 task\(s\): ep-string"):
        run_bundle([other, *tasks[1:]])
    assert run_bundle(tasks) == pinned[2]


async def test_the_gateway_must_replay_exactly_the_tasks_bundle(pinned, tmp_path):
    cassettes, tasks_file, ref = pinned
    tasks = load_tasks(tasks_file)
    elsewhere = [t.model_copy(update={"bundle": f"{BUNDLE}@0000000"}) for t in tasks]
    async with open_bench_gateway(ref, home=TEST_DATA_DIR, cassettes=cassettes) as gateway:
        with pytest.raises(ValueError, match="pinned to bundle episode-tests@0000000 but the gateway replays"):
            await run_benchmark(elsewhere, OracleAgent(), gateway, rollouts=1, seeds=[0], out_dir=tmp_path / "a")
        with pytest.raises(ValueError, match="upstream='sandbox' needs a gateway talking to the sandbox"):
            await run_benchmark(tasks, OracleAgent(), gateway, rollouts=1, seeds=[0], out_dir=tmp_path / "b",
                                upstream="sandbox")
    assert not (tmp_path / "a" / EPISODES_FILE).exists()


async def test_a_run_against_the_sandbox_is_asked_for_and_recorded(pinned, tmp_path):
    cassettes, tasks_file, ref = pinned
    tasks = load_tasks(tasks_file)
    async with open_bench_gateway(ref, upstream="sandbox", home=TEST_DATA_DIR, scale=TEST_SCALE) as gateway:
        with pytest.raises(ValueError, match="replays its tasks' bundle .* strictly"):
            await run_benchmark(tasks, OracleAgent(), gateway, rollouts=1, seeds=[0], out_dir=tmp_path / "a")
        run = await run_benchmark(tasks, OracleAgent(), gateway, rollouts=1, seeds=[0], out_dir=tmp_path / "b",
                                  upstream="sandbox")
    assert run.summary.pass_at[1] == 1.0  # the recording came from this same world
    config = json.loads((tmp_path / "b" / RUN_FILE).read_text(encoding="utf-8"))["config"]
    assert config["upstream"] == "sandbox" and config["upstream_source"].startswith("sandbox world v1 seed=")


def _kopa(args: list[str], cassettes: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "KOPA_HOME": str(home), "KOPA_RECORDER__CASSETTES": str(cassettes)}
    return subprocess.run([sys.executable, "-m", "appliance", "bench", "run", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_cli_runs_the_oracle_and_prints_the_summary(pinned, tmp_path):
    cassettes, tasks_file, ref = pinned
    done = _kopa(["--agent", "oracle", "--tasks", str(tasks_file), "--rollouts", "2", "--seeds", "0,1",
                  "--concurrency", "4"], cassettes, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "pass@1" in done.stdout and "pass@2" in done.stdout and "100.0" in done.stdout
    runs = list((tmp_path / "home" / "runs").glob("bench-*"))
    assert len(runs) == 1
    written = json.loads((runs[0] / RUN_FILE).read_text(encoding="utf-8"))
    assert written["summary"]["pass_at"] == {"1": 1.0, "2": 1.0} and written["config"]["bundle"] == ref
    assert len((runs[0] / EPISODES_FILE).read_text(encoding="utf-8").splitlines()) == 24
    assert (runs[0] / "replay-stats.json").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "gpt", "--seeds", "1"], "--agent 'gpt': choose one of oracle, first-page, listed-order, openai, local"),
    (["--agent", "oracle", "--seeds", "0,x"], "--seeds '0,x': give a count (8 → seeds 0-7) or comma-separated integers"),
    (["--agent", "oracle", "--seeds", "0"], "--seeds '0': a single number is how many seeds to run"),
    (["--agent", "oracle", "--upstream", "cloud"], "--upstream 'cloud': choose one of replay, sandbox, live"),
])
def test_the_cli_refuses_bad_arguments_in_one_line(pinned, tmp_path, args, message):
    done = _kopa([*args, "--tasks", str(pinned[1])], pinned[0], tmp_path / "home")
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_seeds_are_a_count_or_a_list():
    from appliance.bench_cli import parse_seeds
    from bench.options import BenchRunOptions

    assert parse_seeds("8") == list(range(8))  # the paper's n = 8 (Appendix C)
    assert parse_seeds("1") == [0] and parse_seeds("0,3,5") == [0, 3, 5] and parse_seeds("7,") == [7]
    with pytest.raises(ValueError, match="--seeds '1,1': give at least one seed, none twice"):
        BenchRunOptions(agent="oracle", seeds=parse_seeds("1,1"))  # the options check the seeds, once


def test_an_episode_line_with_a_lone_surrogate_is_written_whole(tmp_path):
    """A surrogate cannot be UTF-8: written as it was, the line failed halfway and the run died."""
    from bench.runner import _append_line

    path = tmp_path / EPISODES_FILE
    _append_line(path, {"task_id": "t", "answer": "ANSWER: {x\udc4c}"})
    _append_line(path, {"task_id": "u", "answer": None})
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"task_id": "t", "answer": "ANSWER: {x\ufffd}"}, {"task_id": "u", "answer": None}]
