"""The agent endpoint over real HTTP on loopback, driven with the official ``openai`` client.

The tool loop runs against the cached sandbox world through the chat-profile gateway. The model here is the
scripted loopback chat server (``tests/chat_server.py``), for replies a test needs: malformed tool calls, a failing
model server, a stream. The real local model drives the endpoint in ``test_agent_endpoint_local.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest

from appliance.serving.agent_endpoint import create_agent_app
from appliance.serving.executors import GatewayExecutor
from appliance.serving.service import serve_app
from bench.agents.llm_config import OpenAIAgentConfig
from mcp_gateway.gateway import open_gateway
from mcp_gateway.runtime import Outcome
from tests.chat_server import serve_chat, stop
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

TOKEN = "agent-endpoint-test-token"
TOOL = "search_subway_stations"
OUTCOMES = {o.value for o in Outcome} | {"malformed_tool_call"}


# ----------------------------------------------------------------------------------- fixtures


@pytest.fixture
def scripted() -> Iterator[Callable[..., tuple[str, list[dict[str, Any]]]]]:
    """start(*replies) -> (base URL, requests seen); each reply is (status, payload) for the next request."""
    servers = []

    def start(*replies: tuple[int, Any]) -> tuple[str, list[dict[str, Any]]]:
        script, seen = list(replies), []

        def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
            seen.append(body)
            return script.pop(0) if script else (200, completion("script exhausted"))

        server, base_url = serve_chat(respond)
        servers.append(server)
        return base_url, seen

    yield start
    for server in servers:
        stop(server)


@pytest.fixture(scope="module")
def gateway() -> Iterator[Any]:
    """One chat-profile gateway over the sandbox for the module (building the sandbox app takes seconds); each
    request gets its own session. Its clients hold no connections to a loop (ASGI transport)."""
    gw = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="chat")
    yield gw
    asyncio.run(gw.aclose())


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}


def endpoint_app(base_url: str, gateway: Any, model: str = "scripted", **defaults: Any):
    config = OpenAIAgentConfig(**{"base_url": base_url, "model": model, "temperature": 0.0, **defaults})
    return create_agent_app(config, GatewayExecutor(gateway.runtime), tokens={TOKEN})


def client(origin: str, token: str = TOKEN) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{origin}/v1", api_key=token, max_retries=0)


def extension(message: Any) -> dict[str, Any]:
    """The endpoint's ``kopa`` field, as the openai client keeps unknown fields."""
    return (message.model_extra or {})["kopa"]


# ----------------------------------------------------------------------------------- malformed model output


async def test_malformed_tool_calls_are_error_steps_the_model_is_told_about(scripted, gateway):
    unclosed = f"찾아볼게요.\n<tool_call>\n<function={TOOL}>\n<parameter=STATION_NM>\n서울역\n</function>\n</tool_call>"
    good = f"<tool_call>\n<function={TOOL}>\n<parameter=STATION_NM>\n서울대입구\n</parameter>\n</function>\n</tool_call>"
    base_url, seen = scripted(
        (200, completion(unclosed)),
        (200, completion(None, [{"id": "c1", "type": "function",
                                 "function": {"name": TOOL, "arguments": '{"STATION_NM": 서울'}}])),
        (200, completion(good)),
        (200, completion("ANSWER: {0228}")))
    async with serve_app(endpoint_app(base_url, gateway)) as origin, client(origin) as oai:
        reply = await oai.chat.completions.create(model="kopa-agent",
                                                  messages=[{"role": "user", "content": "서울대입구역 코드?"}],
                                                  tools=[{"type": "function", "function": {"name": TOOL}}])

    assert reply.choices[0].message.content == "ANSWER: {0228}"
    steps = extension(reply.choices[0].message)["trajectory"]
    assert [(s["tool"], s["outcome"]) for s in steps] == [(None, "malformed_tool_call"), (TOOL, "schema_mismatch"),
                                                          (TOOL, "semantic_success")]
    assert "unclosed <parameter" in steps[0]["message"]
    assert steps[2]["arguments"] == {"STATION_NM": "서울대입구"} and steps[2]["total_count"] >= 1
    # the model saw each problem in the next request, and its XML left the assistant text
    second, third = seen[1]["messages"], seen[2]["messages"]
    assert second[1]["content"] == "찾아볼게요." and "could not be read" in second[2]["content"]
    assert "not valid JSON" in third[-1]["content"]
    # the tools the model was offered are the catalog's chat-profile schema (no KEY), not the client's stub
    offered = seen[0]["tools"][0]["function"]
    assert offered["name"] == TOOL and "STATION_NM" in offered["parameters"]["properties"]
    assert "KEY" not in offered["parameters"]["properties"]


async def test_a_failing_model_server_is_a_502_and_a_bad_request_a_400(scripted, gateway):
    base_url, _ = scripted((500, "model crashed"))
    async with serve_app(endpoint_app(base_url, gateway, max_retries=0)) as origin, client(origin) as oai:
        with pytest.raises(openai.APIStatusError) as failed:
            await oai.chat.completions.create(model="kopa-agent", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.BadRequestError) as unknown:
            await oai.chat.completions.create(model="kopa-agent", messages=[{"role": "user", "content": "hi"}],
                                              tools=[{"type": "function", "function": {"name": "no_such_tool"}}])
    assert failed.value.status_code == 502 and "HTTP 500" in failed.value.message
    assert "no_such_tool" in unknown.value.message


async def test_a_lone_surrogate_escape_in_a_request_is_a_replacement_character_not_a_500(scripted, gateway):
    base_url, seen = scripted((200, completion("네")))
    body = json.dumps({"model": "kopa-agent", "messages": [{"role": "user", "content": "SAYS"}]})
    async with serve_app(endpoint_app(base_url, gateway)) as origin, httpx.AsyncClient() as http:
        reply = await http.post(f"{origin}/v1/chat/completions", content=body.replace("SAYS", r"a\udc4cb"),
                                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "네"
    assert seen[0]["messages"][-1]["content"] == "a\ufffdb"


# ----------------------------------------------------------------------------------- auth and streaming


async def test_requests_without_a_valid_bearer_token_are_refused(scripted, gateway):
    base_url, seen = scripted()
    async with serve_app(endpoint_app(base_url, gateway)) as origin:
        async with client(origin, token="wrong") as oai:
            with pytest.raises(openai.AuthenticationError):
                await oai.chat.completions.create(model="kopa-agent", messages=[{"role": "user", "content": "hi"}])
        async with httpx.AsyncClient() as http:
            bare = await http.post(f"{origin}/v1/chat/completions", json={"messages": []})
            health = await http.get(f"{origin}/healthz")
    assert bare.status_code == 401 and "Bearer" in bare.headers["www-authenticate"]
    assert health.status_code == 200 and seen == []  # nothing reached the model


async def test_streamed_replies_are_valid_openai_chunks_ending_with_the_trajectory(scripted, gateway):
    answer = "서울대입구역의 전철역코드는 0228입니다. ANSWER: {0228}"
    call = f"<tool_call>\n<function={TOOL}>\n<parameter=STATION_NM>\n서울대입구\n</parameter>\n</function>\n</tool_call>"
    base_url, _ = scripted((200, completion(call)), (200, completion(answer)))
    async with serve_app(endpoint_app(base_url, gateway)) as origin, client(origin) as oai:
        stream = await oai.chat.completions.create(model="kopa-agent", stream=True,
                                                   messages=[{"role": "user", "content": "서울대입구역 코드?"}],
                                                   extra_body={"kopa": {"tools": [TOOL]}})
        chunks = [chunk async for chunk in stream]

    assert all(c.object == "chat.completion.chunk" and len(c.choices) == 1 for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == answer
    assert [c.choices[0].finish_reason for c in chunks] == [None] * (len(chunks) - 1) + ["stop"]
    kopa = extension(chunks[-1].choices[0].delta)
    assert [(s["tool"], s["outcome"]) for s in kopa["trajectory"]] == [(TOOL, "semantic_success")]
    assert chunks[-1].usage.total_tokens == 110


async def test_the_bench_openai_agent_uses_the_endpoint_unchanged_and_the_tools_run_server_side(scripted, gateway):
    from bench.agents.openai_agent import OpenAIAgent

    call = f"<tool_call>\n<function={TOOL}>\n<parameter=STATION_NM>\n서울대입구\n</parameter>\n</function>\n</tool_call>"
    base_url, seen = scripted((200, completion(call)), (200, completion("ANSWER: {0228}")))
    client_side: list[str] = []

    async def run_locally(tool: str, args: Any) -> Any:
        client_side.append(tool)
        raise AssertionError("the endpoint runs the tools; the client gets only the answer")

    async with serve_app(endpoint_app(base_url, gateway)) as origin:
        agent = OpenAIAgent(base_url=f"{origin}/v1", model="kopa-agent", api_key=TOKEN, temperature=0.0)
        answer = await agent.converse([{"role": "user", "content": "서울대입구역 코드?"}],
                                      [{"type": "function", "function": {"name": TOOL, "parameters": {}}}],
                                      seed=0, call=run_locally)
    assert answer == "ANSWER: {0228}" and client_side == [] and len(seen) == 2


# ----------------------------------------------------------------------------------- budgets (bench.limits)


async def test_the_call_budget_leaves_calls_unrun_and_the_model_is_told(scripted, gateway):
    """``kopa.max_calls`` overrides the episode limits of the endpoint's configuration for one request: the agent step
    runs the calls that fit, answers the rest 'not run' (never sent to the gateway) and the trajectory shows them."""
    def call(i: int, station: str) -> dict[str, Any]:
        return {"id": f"c{i}", "type": "function",
                "function": {"name": TOOL, "arguments": json.dumps({"STATION_NM": station}, ensure_ascii=False)}}

    base_url, seen = scripted((200, completion(None, [call(1, "서울역"), call(2, "서울대입구")])),
                              (200, completion(None, [call(3, "시청")])),
                              (200, completion("ANSWER: {0228}")))
    async with serve_app(endpoint_app(base_url, gateway, max_calls=30)) as origin, client(origin) as oai:
        reply = await oai.chat.completions.create(
            model="kopa-agent", messages=[{"role": "user", "content": "역 코드?"}],
            tools=[{"type": "function", "function": {"name": TOOL}}], extra_body={"kopa": {"max_calls": 2}})

    kopa = extension(reply.choices[0].message)
    assert reply.choices[0].message.content == "ANSWER: {0228}" and kopa["calls"] == 2
    assert [(s["tool"], s["outcome"]) for s in kopa["trajectory"]] == [
        (TOOL, "semantic_success"), (TOOL, "semantic_success"), (TOOL, "not_run")]
    assert "call budget of 2 tool calls is spent" in kopa["trajectory"][2]["message"]
    told = json.loads(seen[2]["messages"][-1]["content"])
    assert told["outcome"] == "not_run" and seen[2]["messages"][-1]["tool_call_id"] == "c3"
    async with serve_app(endpoint_app(base_url, gateway)) as origin, client(origin) as oai:
        with pytest.raises(openai.BadRequestError, match="kopa.max_calls must be an integer of at least 0, got -1"):
            await oai.chat.completions.create(model="kopa-agent", messages=[{"role": "user", "content": "?"}],
                                              extra_body={"kopa": {"max_calls": -1}})
