"""The console's benchmark job plays model agents through the same registry and model path as `kopa bench run`:
an endpoint model on the agent profile here (the local model goes through ``open_agent`` the same way)."""

from __future__ import annotations

import json

import pytest

from bench.options import BenchRunOptions
from mcp_gateway.catalog import load_catalog
from tests.chat_server import serve_chat, stop
from tests.tui.conftest import SMALL_TASKS
from tui.sources import BenchJob
from tui.sources.records import Records


def test_the_console_runs_an_endpoint_model_on_the_agent_profile(tmp_path_factory):
    from tests.tui.fixture_home import build_fixture_home

    settings = build_fixture_home(tmp_path_factory.mktemp("job") / "home")
    seen: list[dict] = []

    def respond(body, headers):
        seen.append(body)
        return 200, {"choices": [{"message": {"role": "assistant", "content": "ANSWER: {모름}"}}]}

    server, base_url = serve_chat(respond)
    try:
        options = BenchRunOptions(agent="openai", tasks=SMALL_TASKS, rollouts=1, base_url=base_url, model="scripted")
        job = BenchJob(options, settings, Records(settings.metadb_url), load_catalog())
        result = job.run(lambda done, total, passed: None)
    finally:
        stop(server)
    assert result.ran == 2 and not result.errors and result.summary.pass_at[1] == 0.0
    assert [body["model"] for body in seen] == ["scripted", "scripted"]
    assert all(body["tools"] for body in seen)  # the episode's tools went to the model
    lines = [json.loads(line) for line in (job.run_dir / "episodes.jsonl").read_text().splitlines()]
    assert [line["answer"] for line in lines] == ["ANSWER: {모름}"] * 2
    newest = Records(settings.metadb_url).bench_runs()[0]
    assert (newest.agent, newest.n_episodes, newest.complete) == ("openai", 2, True)


def test_the_console_refuses_the_agent_endpoint_and_other_upstreams(tmp_path, monkeypatch):
    from appliance.config import KopaSettings

    monkeypatch.setenv("KOPA_HOME", str(tmp_path))
    with pytest.raises(ValueError, match="the console starts oracle, first-page, listed-order, openai, local; run endpoint with"):
        BenchJob(BenchRunOptions(agent="endpoint"), KopaSettings(), None, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the console replays the tasks' bundle"):
        BenchJob(BenchRunOptions(agent="oracle", upstream="sandbox"), KopaSettings(), None, None)  # type: ignore
