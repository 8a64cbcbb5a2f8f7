"""One options object, one run-dir naming and one agent registry for every way a benchmark run starts:
``kopa bench run``, ``kopa bench demo`` and the console's bench job."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.agents import AGENTS, AgentEntry, AgentKind, FirstPageAgent, OpenAIAgent, OracleAgent, agent_names
from bench.agents import make_agent, open_agent
from bench.options import BenchRunOptions, new_run_dir, run_dir_name
from models.settings import AgentProfile

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------ the options


@pytest.mark.parametrize(("values", "message"), [
    ({"agent": "gpt"}, "--agent 'gpt': choose one of oracle, first-page, listed-order, openai, local, endpoint"),
    ({"upstream": "cloud"}, "--upstream 'cloud': choose one of replay, sandbox, live"),
    ({"mode": "record"}, "--mode 'record': choose one of replay, replay-or-record"),
    ({"mode": "replay-or-record"}, "--mode replay-or-record records the pinned bundle's misses from the sandbox: "
                                   "add --upstream sandbox"),
    ({"base_url": "http://h:1/v1"}, "--base-url and --model go with --agent openai or endpoint, not oracle"),
    ({"agent": "local", "model": "m"}, "--base-url and --model go with --agent openai or endpoint, not local"),
    ({"rollouts": 0}, "--rollouts 0: give at least 1"),
    ({"concurrency": 0}, "--concurrency 0: give at least 1"),
    ({"per_domain": 0}, "--per-domain 0: give at least 1"),
    ({"max_turns": 0}, "--max-turns 0: give at least 1"),
    ({"seeds": (0, 0)}, "--seeds '0,0': give at least one seed, none twice"),
    ({"seeds": ()}, "--seeds '': give at least one seed, none twice"),
])
def test_a_bad_option_fails_with_the_one_line_error_of_kopa_bench_run(values, message):
    with pytest.raises(ValueError) as caught:
        BenchRunOptions(**{"agent": "oracle", **values})
    assert str(caught.value) == message and "\n" not in message


def test_the_options_are_a_checked_frozen_value():
    options = BenchRunOptions(agent="openai", seeds=[2, 0], max_turns=4, model="m")  # type: ignore[arg-type]
    assert options.seeds == (2, 0) and options.rollouts == 4 and options.tasks is None and options.run_dir is None
    assert options.agent_overrides() == {"max_turns": 4, "model": "m"}  # only the options given
    assert BenchRunOptions(agent="oracle").agent_overrides() == {}
    with pytest.raises(FrozenInstanceError):
        options.rollouts = 1  # type: ignore[misc]
    assert BenchRunOptions(agent="endpoint", base_url="http://h:1/v1", upstream="sandbox", mode="replay-or-record")


def test_the_cli_builds_its_options_from_its_flags(tmp_path):
    """`kopa bench run`'s flags become the options: a bad one is refused by them, with their message."""
    from appliance.bench_cli import bench_app

    runner = CliRunner()
    refused = runner.invoke(bench_app, ["run", "--agent", "oracle", "--rollouts", "0"])
    assert isinstance(refused.exception, ValueError) and str(refused.exception) == "--rollouts 0: give at least 1"
    both = runner.invoke(bench_app, ["run", "--agent", "first-page", "--model", "m"])
    assert str(both.exception) == "--base-url and --model go with --agent openai or endpoint, not first-page"
    missing = runner.invoke(bench_app, ["run", "--agent", "oracle", "--tasks", str(tmp_path / "none.jsonl")])
    assert str(missing.exception) == f"--tasks {tmp_path / 'none.jsonl'}: no such file"


# ------------------------------------------------------------------------------------------- run-dir naming


def test_a_run_directory_is_named_to_the_microsecond():
    at = datetime(2025, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert run_dir_name(at) == "bench-20250601T120000123456Z"
    assert run_dir_name(at.replace(microsecond=123457)) != run_dir_name(at)  # same second, two names
    assert run_dir_name().startswith("bench-") and run_dir_name().endswith("Z")


def test_every_run_name_is_one_stamp_rule():
    from bench.options import stamped_name

    at = datetime(2025, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)
    # EDGE graph runs, demos, replay stats and training runs: to the second; bench runs: to the microsecond
    assert [stamped_name(prefix, at) for prefix in ("graph", "demo", "replay-kopa-default-1")] == [
        "graph-20250601T120000Z", "demo-20250601T120000Z", "replay-kopa-default-1-20250601T120000Z"]
    assert stamped_name("bench", at, microseconds=True) == run_dir_name(at)


def test_two_runs_started_at_the_same_moment_get_two_new_directories(tmp_path):
    at = datetime(2025, 6, 1, 12, 0, 0, 5, tzinfo=UTC)
    first, second = new_run_dir(tmp_path / "runs", at), new_run_dir(tmp_path / "runs", at)
    assert first.name == "bench-20250601T120000000005Z" and second.name == "bench-20250601T120000000005Z-2"
    assert first.is_dir() and second.is_dir() and not any(first.iterdir())


def test_the_cli_and_the_console_name_run_directories_the_same_way(tmp_path, monkeypatch):
    """Both default to ``new_run_dir(<home>/runs)`` through the one run flow (``bench.run_flow.with_run_dir``): the
    CLI in ``run_bench``, the console when its ``BenchJob`` is made."""
    import appliance.bench_cli as bench_cli
    import bench.run_flow
    import tui.sources.bench_job as bench_job
    from appliance.config import KopaSettings

    made: list[Path] = []
    original = bench.run_flow.new_run_dir

    def recording(runs: Path, now: datetime | None = None) -> Path:  # a fixed clock: both in the same microsecond
        made.append(original(runs, datetime(2025, 6, 1, tzinfo=UTC)))
        return made[-1]

    monkeypatch.setenv("KOPA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(bench.run_flow, "new_run_dir", recording)
    job = bench_job.BenchJob(BenchRunOptions(agent="oracle", rollouts=1), KopaSettings(), None, None)  # type: ignore
    assert job.run_dir == tmp_path / "home" / "runs" / "bench-20250601T000000000000Z"
    monkeypatch.setattr(bench.run_flow, "_run", _stop_at_the_run)
    monkeypatch.setattr("bench.task.load_tasks", lambda path, catalog=None: [])
    monkeypatch.setattr("mcp_gateway.catalog.load_catalog", lambda: None)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("", encoding="utf-8")
    with pytest.raises(_Stopped) as stopped:
        bench_cli.run_agent(BenchRunOptions(agent="oracle", tasks=tasks))
    assert stopped.value.args[0] == tmp_path / "home" / "runs" / "bench-20250601T000000000000Z-2" == made[-1]
    given = bench_job.BenchJob(BenchRunOptions(agent="oracle", run_dir=tmp_path / "mine"), KopaSettings(), None, None)
    assert given.run_dir == tmp_path / "mine" and len(made) == 2  # a given directory is used as it is


async def _dialog_choices(screen) -> list[str]:
    """The agents the new-run dialog offers, read from its Select once mounted."""
    from textual.app import App
    from textual.widgets import Select

    async with App().run_test() as pilot:
        await pilot.app.push_screen(screen)
        await pilot.pause()
        return [value for _, value in screen.query_one("#run-agent", Select)._options if value is not Select.BLANK]


class _Stopped(Exception):
    pass


async def _stop_at_the_run(options, settings, tasks, tasks_file, *, out_dir, **hooks):
    raise _Stopped(out_dir)


# ------------------------------------------------------------------------------------------------ the registry


def test_the_registry_says_what_each_agent_is():
    assert agent_names() == ("oracle", "first-page", "listed-order", "openai", "local", "endpoint")
    assert agent_names(AgentKind.BASELINE) == ("oracle", "first-page", "listed-order")
    assert agent_names(AgentKind.ENDPOINT) == ("openai",)
    assert agent_names(AgentKind.MODEL_SERVER) == ("local", "endpoint")
    assert [n for n, e in AGENTS.items() if e.takes_endpoint] == ["openai", "endpoint"]
    assert all(entry.name == name and entry.summary and entry.make for name, entry in AGENTS.items())  # each made here


def test_make_agent_makes_what_the_registry_says():
    assert isinstance(make_agent("oracle", max_turns=3), OracleAgent)  # a baseline has no model settings
    assert isinstance(make_agent("first-page"), FirstPageAgent)
    agent = make_agent("openai", profile=AgentProfile(base_url="http://h:1/v1", model="m"), max_turns=3,
                       model="other")
    assert isinstance(agent, OpenAIAgent)
    assert (agent.config.base_url, agent.config.model, agent.config.max_turns) == ("http://h:1/v1", "other", 3)
    with pytest.raises(ValueError, match="needs base_url and model: set KOPA_MODELS__AGENT__BASE_URL"):
        make_agent("openai")  # no profile and no --base-url: the setting to add is named
    with pytest.raises(ValueError, match=r"agent 'local' owns a model server .* `async with open_agent\('local'\)`"):
        make_agent("local")
    with pytest.raises(ValueError, match=r"agent 'endpoint' owns a model server .* `async with open_agent\('endpoint'\)`"):
        make_agent("endpoint")
    with pytest.raises(ValueError, match="unknown agent 'gpt'; choose one of first-page, listed-order, openai, oracle"):
        make_agent("gpt")


async def test_open_agent_opens_any_agent_bench_makes(monkeypatch):
    import bench.agents.registry as registry

    async with open_agent("first-page") as agent:
        assert isinstance(agent, FirstPageAgent)
    monkeypatch.setattr(registry, "_SERVER", {})  # bench alone, without the appliance that serves the endpoint
    with pytest.raises(ValueError, match="agent 'endpoint' is served by the appliance's agent endpoint, which is not "
                                         "loaded: import appliance"):
        async with open_agent("endpoint", base_url="http://h:1/v1", model="m"):
            pass


def test_the_cli_the_console_and_make_agent_read_one_registry(monkeypatch, tmp_path):
    from appliance.bench_cli import bench_app
    from tui.screens.bench_new_run import NewRunScreen
    from tui.sources import AGENTS as CONSOLE_AGENTS

    import typer

    run = typer.main.get_command(bench_app).commands["run"]  # type: ignore[attr-defined]
    agent_help = next(p.help for p in run.params if p.name == "agent")
    assert agent_help == "agent: " + " | ".join(f"{name} ({entry.kind})" for name, entry in AGENTS.items())
    assert "oracle (baseline)" in agent_help and "endpoint (model server)" in agent_help
    # the console starts every agent of the registry: baselines, the endpoint model, the model servers
    assert CONSOLE_AGENTS == ("oracle", "first-page", "listed-order", "openai", "local", "endpoint")
    assert asyncio.run(_dialog_choices(NewRunScreen(tmp_path / "tasks.jsonl"))) == list(CONSOLE_AGENTS)

    # an agent added to the registry is known to all of them at once
    stand_in = AgentEntry("stand-in", AgentKind.BASELINE, "a test's baseline", make=lambda profile=None: OracleAgent())
    monkeypatch.setitem(AGENTS, "stand-in", stand_in)
    assert isinstance(make_agent("stand-in"), OracleAgent)
    assert BenchRunOptions(agent="stand-in").agent == "stand-in"
    missing = CliRunner().invoke(bench_app, ["run", "--agent", "stand-in", "--tasks", str(tmp_path / "t.jsonl")])
    assert str(missing.exception) == f"--tasks {tmp_path / 't.jsonl'}: no such file"  # past the agent check
    monkeypatch.delitem(AGENTS, "stand-in")
    gone = CliRunner().invoke(bench_app, ["run", "--agent", "stand-in"])
    assert str(gone.exception).startswith("--agent 'stand-in': choose one of oracle, first-page")


def test_kopa_starts_without_loading_the_agents_or_the_runner():
    """The registry and the options are read at start-up (the --agent help); nothing heavy comes with them."""
    code = ("import sys, appliance.cli; print(sorted(m for m in ('openai', 'bench.episode', 'bench.runner', "
            "'bench.agents.oracle', 'bench.task', 'bench.agents.openai_agent') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
