"""One run flow (``bench.run_flow``) behind `kopa bench run` and the console: the options are the one place of the
defaults and the checks, and the registry makes every agent, the agent endpoint included."""

from __future__ import annotations

from dataclasses import fields

import pytest
import typer
from typer.testing import CliRunner

from bench.agents import AGENTS, open_agent
from bench.options import BenchRunOptions
from models.settings import AgentProfile
from tests.chat_server import serve_chat, stop


def test_the_cli_flags_default_to_the_options_defaults():
    from appliance.bench_cli import bench_app

    run = typer.main.get_command(bench_app).commands["run"]  # type: ignore[attr-defined]
    flags = {param.name: param.default for param in run.params}
    assert set(flags) == {field.name for field in fields(BenchRunOptions)}  # one flag per option
    for field in fields(BenchRunOptions):
        if field.name == "seeds":
            assert flags["seeds"] is None  # a count or a list; none given: the options' seeds, (0,)
        elif field.name != "agent":
            assert flags[field.name] == field.default, field.name


@pytest.mark.parametrize(("args", "message"), [
    (["--seeds", "1,1"], "--seeds '1,1': give at least one seed, none twice"),  # checked by the options, once
    (["--seeds", ","], "--seeds '': give at least one seed, none twice"),
    (["--per-domain", "0"], "--per-domain 0: give at least 1"),  # the options' check, not a second one of typer
    (["--max-turns", "0"], "--max-turns 0: give at least 1"),
    (["--concurrency", "0"], "--concurrency 0: give at least 1"),
])
def test_the_cli_refuses_what_the_options_refuse_with_their_message(args, message):
    from appliance.bench_cli import bench_app

    refused = CliRunner().invoke(bench_app, ["run", "--agent", "oracle", *args])
    assert isinstance(refused.exception, ValueError) and str(refused.exception) == message


def test_no_seeds_given_is_the_options_seed_zero(tmp_path, monkeypatch):
    import appliance.bench_cli as bench_cli

    given: list[BenchRunOptions] = []

    def stop_at_the_run(options):
        given.append(options)
        raise ValueError("stopped")

    monkeypatch.setattr(bench_cli, "run_agent", stop_at_the_run)
    CliRunner().invoke(bench_cli.bench_app, ["run", "--agent", "oracle"])
    CliRunner().invoke(bench_cli.bench_app, ["run", "--agent", "oracle", "--seeds", "3", "--no-resume"])
    assert given == [BenchRunOptions(agent="oracle"), BenchRunOptions(agent="oracle", seeds=(0, 1, 2), resume=False)]


async def test_the_registry_makes_the_agent_endpoint():
    """``endpoint`` has its maker in the registry: the agent endpoint (served by the appliance, which hands the
    registry its server when imported) over the model server at ``base_url``, with the episode limits given."""
    import appliance  # noqa: F401  (the appliance provides the agent endpoint's server)
    from appliance.serving.endpoint_agent import EndpointAgent

    assert AGENTS["endpoint"].make is not None
    server, base_url = serve_chat(lambda body, headers: (200, {"choices": [{"message": {"content": "ANSWER: {1}"}}]}))
    try:
        async with open_agent("endpoint", profile=AgentProfile(), base_url=base_url, model="scripted",
                              max_turns=3) as agent:
            assert isinstance(agent, EndpointAgent)
            assert (agent.model.base_url, agent.model.model, agent.model.max_turns) == (base_url, "scripted", 3)
            profiled = AgentProfile(base_url=base_url, model="from-profile")
        async with open_agent("endpoint", profile=profiled) as agent:  # [models.agent] when no --base-url
            assert (agent.model.base_url, agent.model.model) == (base_url, "from-profile")
    finally:
        stop(server)
