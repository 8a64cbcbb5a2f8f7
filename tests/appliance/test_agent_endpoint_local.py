"""The agent endpoint with the real local model: SmolLM2-135M on llama.cpp, the cached sandbox world behind the
chat-profile gateway, the official ``openai`` client over loopback HTTP.

One test, one model server: every model turn of the CPU model with a tool schema costs seconds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from appliance.serving.service import serve_app
from mcp_gateway.gateway import open_gateway
from mcp_gateway.server import AUDIT_LOGGER
from models.plan import plan_model_server
from models.server import ModelServer
from tests.appliance.test_agent_endpoint import OUTCOMES, TOOL, client, endpoint_app, extension
from tests.conftest import TEST_DATA_DIR, sandbox_upstream


@pytest.fixture(scope="module")
def local_model() -> Iterator[ModelServer]:
    """SmolLM2-135M on llama.cpp, once for the module."""
    with ModelServer(plan_model_server(None, n_threads=2), startup_timeout_s=120) as server:
        yield server


@pytest.fixture
async def gateway() -> AsyncIterator[Any]:
    gw = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="chat")
    try:
        yield gw
    finally:
        await gw.aclose()


# ----------------------------------------------------------------------------------- the real local model


async def test_local_model_tool_loop_over_the_sandbox_returns_the_trajectory(local_model, gateway, caplog):
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    app = endpoint_app(local_model.base_url, gateway, model=local_model.plan.served_name,
                       **local_model.agent_settings())
    async with serve_app(app) as origin, client(origin) as oai:
        # a 135M model never picks a tool on its own (reference: python-stack.md §3): force it. One model turn
        # is the budget (each CPU turn with a tool grammar costs 10-30 s); the scripted tests cover later turns
        reply = await oai.chat.completions.create(
            model="kopa-agent", messages=[{"role": "user", "content": "서울역의 전철역코드를 찾아 주세요."}],
            tools=[{"type": "function", "function": {"name": TOOL, "parameters": {}}}],
            tool_choice={"type": "function", "function": {"name": TOOL}}, max_tokens=32,
            extra_body={"kopa": {"max_turns": 1}})

    choice = reply.choices[0]
    kopa = extension(choice.message)
    assert (choice.finish_reason, kopa["stop_reason"], choice.message.content) == ("length", "budget", "")
    steps = kopa["trajectory"]
    assert steps and steps[0]["tool"] == TOOL and len(steps) == sum(t["tool_calls"] for t in kopa["turns"])
    assert all(step["outcome"] in OUTCOMES for step in steps)
    # chat profile: the gateway injects the key, so no call fails authorization, and no key is ever shown
    assert not any(step["outcome"] == "auth_error" for step in steps)
    assert all("KEY" not in (step["arguments"] or {}) for step in steps if isinstance(step["arguments"], dict))
    assert [t["tool_calls"] for t in kopa["turns"]] == [1] and reply.usage.completion_tokens > 0
    assert steps[0]["correlation_id"] and steps[0]["outcome"] != "malformed_tool_call"  # it reached the gateway
    audit = [json.loads(r.getMessage()) for r in caplog.records if r.name == AUDIT_LOGGER]
    assert [(a["tool"], a["toolset"]) for a in audit] == [(step["tool"], "agent-endpoint") for step in steps]
    key = sandbox_upstream().keys["seoul"]
    assert key not in reply.model_dump_json() and key not in caplog.text
