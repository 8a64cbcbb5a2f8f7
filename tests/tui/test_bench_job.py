"""The console's benchmark job is `kopa bench run`'s run (``bench.run_flow.run_bench``): the same options give the
same files, ``coverage.json`` included, and it plays every agent of the registry: an endpoint model on the agent
profile and the agent endpoint here (the local model goes through ``open_agent`` the same way)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from typer.testing import CliRunner

from bench.options import BenchRunOptions
from mcp_gateway.catalog import load_catalog
from tests.chat_server import serve_chat, stop
from tests.tui.conftest import SMALL_TASKS
from tui.sources import BenchJob
from tui.sources.records import Records


def run_on_a_scripted_model(tmp_path_factory, agent: str, **options):
    """A console bench job of ``agent`` over the small task file, its model a chat server that always answers
    "don't know": the job, its result, the settings of its home and the request bodies the model server saw."""
    from tests.tui.fixture_home import build_fixture_home

    settings = build_fixture_home(tmp_path_factory.mktemp(agent) / "home")
    seen: list[dict] = []

    def respond(body, headers):
        seen.append(body)
        return 200, {"choices": [{"message": {"role": "assistant", "content": "ANSWER: {모름}"}}]}

    server, base_url = serve_chat(respond)
    try:
        job = BenchJob(BenchRunOptions(agent=agent, tasks=SMALL_TASKS, rollouts=1, base_url=base_url, model="scripted",
                                       **options), settings, Records(settings.metadb_url), load_catalog())
        result = job.run(lambda done, total, passed: None)
    finally:
        stop(server)
    return job, result, settings, seen


def test_the_console_runs_an_endpoint_model_on_the_agent_profile(tmp_path_factory):
    job, result, settings, seen = run_on_a_scripted_model(tmp_path_factory, "openai")
    assert result.ran == 2 and not result.errors and result.summary.pass_at[1] == 0.0
    assert [body["model"] for body in seen] == ["scripted", "scripted"]
    assert all(body["tools"] for body in seen)  # the episode's tools went to the model
    lines = [json.loads(line) for line in (job.run_dir / "episodes.jsonl").read_text().splitlines()]
    assert [line["answer"] for line in lines] == ["ANSWER: {모름}"] * 2
    newest = Records(settings.metadb_url).bench_runs()[0]
    assert (newest.agent, newest.n_episodes, newest.complete) == ("openai", 2, True)


def test_the_console_refuses_other_upstreams(tmp_path, monkeypatch):
    from appliance.config import KopaSettings

    monkeypatch.setenv("KOPA_HOME", str(tmp_path))
    with pytest.raises(ValueError, match="the console replays the tasks' bundle"):
        BenchJob(BenchRunOptions(agent="oracle", upstream="sandbox"), KopaSettings(), None, None)  # type: ignore
    with pytest.raises(ValueError, match="the console replays the tasks' bundle"):
        BenchJob(BenchRunOptions(agent="endpoint", upstream="sandbox", mode="replay-or-record"), KopaSettings(),
                 None, None)  # type: ignore[arg-type]


def _same_content(path: Path) -> object:
    """A run file's content less what differs between two runs of the same options (times, durations)."""
    if path.suffix == ".jsonl":
        return [{k: v for k, v in json.loads(line).items() if k != "duration_s"}
                for line in path.read_text(encoding="utf-8").splitlines()]
    content = json.loads(path.read_text(encoding="utf-8"))
    if path.name == "run.json":
        content = {k: v for k, v in content.items() if k not in ("started_at", "finished_at")}
    return content


def test_a_console_run_and_a_cli_run_of_the_same_options_write_the_same_files(tmp_path_factory, monkeypatch):
    """One run flow: the console's job and `kopa bench run` of the same options replay the same episodes and write
    the same files, coverage.json included; both are recorded in the metadata DB."""
    from appliance.bench_cli import bench_app
    from tests.tui.fixture_home import build_fixture_home

    root = tmp_path_factory.mktemp("same")
    settings = build_fixture_home(root / "home")
    monkeypatch.setenv("KOPA_HOME", str(root / "home"))  # what `kopa bench run` reads: the same home
    options = BenchRunOptions(agent="oracle", tasks=SMALL_TASKS, rollouts=2, seeds=(0, 1), run_dir=root / "console")
    job = BenchJob(options, settings, Records(settings.metadb_url), load_catalog())
    seen: list[tuple[int, int, int]] = []
    result = job.run(lambda done, total, passed: seen.append((done, total, passed)))
    assert result.ran == 8 and seen[-1] == (8, 8, 8)

    cli = CliRunner().invoke(bench_app, ["run", "--agent", "oracle", "--tasks", str(SMALL_TASKS), "--rollouts", "2",
                                         "--seeds", "0,1", "--run-dir", str(root / "cli")])
    assert cli.exit_code == 0, cli.output
    assert "8 episode(s): 8 passed, 0 wrong or no answer, 0 model error(s)" in cli.output
    assert "replay misses: 0 call(s) in 0 episode(s), 0 recorded; model errors: 0 episode(s)" in cli.output

    console_files = sorted(p.relative_to(root / "console") for p in (root / "console").rglob("*"))
    cli_files = sorted(p.relative_to(root / "cli") for p in (root / "cli").rglob("*"))
    assert console_files == cli_files
    assert {p.name for p in console_files} == {"coverage.json", "episodes.jsonl", "replay-stats.json", "run.json"}
    for name in console_files:
        assert _same_content(root / "console" / name) == _same_content(root / "cli" / name), name
    assert json.loads((root / "console" / "coverage.json").read_text(encoding="utf-8")) == {
        "episodes": 8, "replay_misses": 0, "episodes_with_replay_miss": 0, "model_errors": 0, "recorded_misses": 0,
        "distinct_missed_requests": 0, "passed": 8, "wrong_answers": 0, "error_kinds": []}
    assert job.notices and job.notices[0] in cli.output  # the run's notes: printed by one, kept by the other
    recorded = {run.run_dir: run for run in Records(settings.metadb_url).bench_runs()}
    for folder in ("console", "cli"):
        row = recorded[str(root / folder)]
        assert (row.agent, row.n_episodes, row.complete) == ("oracle", 8, True)


def test_the_console_runs_the_agent_endpoint_the_registry_makes(tmp_path_factory):
    """The agent endpoint (``--agent endpoint``) is a registry agent like the others: the console offers and runs it,
    its episodes played by the endpoint's server-side loop over the model server at ``base_url``."""
    from tui.sources import AGENTS

    assert "endpoint" in AGENTS
    job, result, _, seen = run_on_a_scripted_model(tmp_path_factory, "endpoint", max_turns=2)
    assert result.ran == 2 and not result.errors and result.summary.pass_at[1] == 0.0
    assert [body["model"] for body in seen] == ["scripted", "scripted"] and all(body["tools"] for body in seen)
    lines = [json.loads(line) for line in (job.run_dir / "episodes.jsonl").read_text().splitlines()]
    assert [(line["agent"], line["answer"]) for line in lines] == [("endpoint", "ANSWER: {모름}")] * 2
    assert json.loads((job.run_dir / "coverage.json").read_text())["wrong_answers"] == 2
