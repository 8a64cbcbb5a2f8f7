"""The agent endpoint refuses the client's mistakes itself, over real HTTP on loopback, before the model server is
called: each a 4xx in OpenAI's error shape whose ``param`` names the field and whose message names the limit.

The model server is the scripted loopback chat server (``tests/chat_server.py``); ``seen`` is every request it got.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import httpx
import openai
import pytest

from appliance.serving.agent_endpoint import create_agent_app
from appliance.serving.request_checks import DEFAULT_MAX_BODY_BYTES, RequestLimits
from appliance.serving.service import serve_app
from bench.agents.llm_config import OpenAIAgentConfig
from mcp_gateway.runtime import ToolResult
from tests.chat_server import serve_chat, stop

TOKEN = "agent-endpoint-limits-token"
CONTEXT = 8192
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
ANSWER = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "네"}, "finish_reason": "stop"}],
          "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


class NoTools:
    """An executor with no tools: these requests never get as far as a tool call."""

    def tools(self, requested: Sequence[Any] | None, kopa: Mapping[str, Any]) -> list[dict[str, Any]]:
        return []

    def begin(self, kopa: Mapping[str, Any]) -> str:
        return "session"

    async def call(self, session: str, tool: str, args: Any) -> ToolResult:
        raise AssertionError("no tool is offered")

    def end(self, session: str) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, requests seen) of a chat server that answers every request with ``ANSWER``."""
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        seen.append(body)
        return 200, ANSWER

    server, base_url = serve_chat(respond)
    yield base_url, seen
    stop(server)


def app(base_url: str, **limits: Any) -> Any:
    config = OpenAIAgentConfig(base_url=base_url, model="scripted", max_retries=0)
    return create_agent_app(config, NoTools(), tokens={TOKEN}, **({"context_tokens": CONTEXT} | limits))


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "kopa-agent", "messages": [{"role": "user", "content": "안녕"}]} | fields


def refusal(message: str, param: str | None, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


async def post(base_url: str, content: Any, **limits: Any) -> httpx.Response:
    async with serve_app(app(base_url, **limits)) as origin, httpx.AsyncClient() as http:
        return await http.post(f"{origin}/v1/chat/completions", content=content, headers=HEADERS)


# ----------------------------------------------------------------------------------- the body's size


async def test_a_body_over_the_limit_derived_from_the_models_context_is_a_413_never_forwarded(model_server):
    base_url, seen = model_server
    limit = RequestLimits.for_context(CONTEXT).max_body_bytes
    body = json.dumps(chat(messages=[{"role": "user", "content": "x" * limit}]))
    reply = await post(base_url, body)
    assert reply.status_code == 413 and seen == []
    assert reply.json() == refusal(f"the request body is {len(body):,} bytes; the limit is {limit:,} bytes "
                                   f"(derived from the model's context of 8,192 tokens)", None, "request_too_large")


async def test_a_streamed_body_without_a_length_is_counted_and_refused_at_the_configured_maximum(model_server):
    base_url, seen = model_server

    async def chunks() -> AsyncIterator[bytes]:  # chunked transfer encoding: no Content-Length to refuse up front
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(16):
            yield b"x" * 1024

    reply = await post(base_url, chunks(), max_body_bytes=4096)
    assert reply.status_code == 413 and seen == []
    assert reply.json()["error"]["message"] == ("the request body is more than 4,096 bytes; the limit is 4,096 bytes "
                                                "(the configured maximum)")


def test_the_body_limit_is_the_configured_maximum_else_derived_from_the_context_else_the_default():
    assert RequestLimits.for_context(CONTEXT, max_body_bytes=1000).max_body_bytes == 1000
    assert RequestLimits.for_context(CONTEXT).max_body_bytes == CONTEXT * 8 + 256 * 1024
    assert RequestLimits.for_context(None).max_body_bytes == DEFAULT_MAX_BODY_BYTES
    with pytest.raises(ValueError, match="context_tokens must be positive, got 0"):
        RequestLimits.for_context(0)


# ----------------------------------------------------------------------------------- the body's fields


@pytest.mark.parametrize(("body", "expected"), [
    ('{"messages": [', refusal("the request body is not JSON (line 1, column 15); send a chat-completions request "
                               "object", None, "invalid_json")),
    ('["hi"]', refusal('the request body must be a JSON object, got a list', None, "invalid_type")),
    (chat(messages=[{"role": "system", "content": "s"}, {"role": "wizard", "content": "hi"}]),
     refusal('messages[1].role is "wizard"; a role is one of system, user, assistant, tool', "messages[1].role",
             "invalid_value")),
    (chat(messages=[]), refusal("messages must be a non-empty list of message objects, got a list", "messages",
                                "invalid_value")),
    (chat(max_tokens="100"), refusal('max_tokens must be an integer from 1 to 8,192, got "100" (a string)',
                                     "max_tokens", "invalid_type")),
    (chat(max_tokens=100_000), refusal("max_tokens must be an integer from 1 to 8,192 (the model's context), "
                                       "got 100000", "max_tokens", "invalid_value")),
    (chat(max_tokens=12.5), refusal("max_tokens must be an integer from 1 to 8,192, got 12.5 (a number)",
                                    "max_tokens", "invalid_type")),
    (chat(temperature=3), refusal("temperature must be a number from 0 to 2, got 3", "temperature", "invalid_value")),
    (chat(temperature=True), refusal("temperature must be a number from 0 to 2, got true (a boolean)", "temperature",
                                     "invalid_type")),
    (chat(n=2), refusal("n must be an integer equal to 1, got 2: the agent endpoint answers with one choice", "n",
                        "invalid_value")),
    (chat(top_p=-0.5), refusal("top_p must be a number from 0 to 1, got -0.5", "top_p", "invalid_value")),
    (chat(stream="yes"), refusal('stream must be true or false, got "yes" (a string)', "stream", "invalid_type")),
    (chat(kopa={"max_calls": -1}), refusal("kopa.max_calls must be an integer of at least 0, got -1",
                                           "kopa.max_calls", "invalid_value")),
    (chat(messages=[{"role": "user", "content": "가" * (CONTEXT * 2)}]),
     refusal("the messages are at least 12,288 tokens; the model's context is 8,192 tokens. Shorten or drop messages",
             "messages", "context_length_exceeded")),
], ids=["malformed-json", "not-an-object", "unknown-role", "no-messages", "string-max-tokens",
        "max-tokens-over-context", "float-max-tokens", "temperature-over-2", "boolean-temperature", "n-of-2", "negative-top-p", "string-stream",
        "negative-call-budget", "prompt-over-context"])
async def test_a_mistaken_request_is_a_400_naming_the_field_and_never_reaches_the_model(model_server, body, expected):
    base_url, seen = model_server
    reply = await post(base_url, body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
    assert (reply.status_code, reply.json()) == (400, expected)
    assert seen == []
    assert "pydantic" not in reply.text and "http" not in expected["error"]["message"]


async def test_a_mistaken_streamed_request_is_a_400_not_an_event_stream(model_server):
    base_url, seen = model_server
    async with serve_app(app(base_url)) as origin:
        async with openai.AsyncOpenAI(base_url=f"{origin}/v1", api_key=TOKEN, max_retries=0) as oai:
            with pytest.raises(openai.BadRequestError) as refused:
                await oai.chat.completions.create(model="kopa-agent", stream=True, max_tokens=0,
                                                  messages=[{"role": "user", "content": "hi"}])
    assert refused.value.body == refusal("max_tokens must be an integer from 1 to 8,192 (the model's context), got 0",
                                         "max_tokens", "invalid_value")["error"]
    assert seen == []


async def test_a_request_within_every_limit_reaches_the_model_with_its_settings(model_server):
    base_url, seen = model_server
    async with serve_app(app(base_url)) as origin:
        async with openai.AsyncOpenAI(base_url=f"{origin}/v1", api_key=TOKEN, max_retries=0) as oai:
            reply = await oai.chat.completions.create(
                model="kopa-agent", n=1, temperature=0.2, max_completion_tokens=64, seed=7,
                messages=[{"role": "system", "content": "짧게"}, {"role": "user", "content": "안녕"},
                          {"role": "assistant", "content": "안녕하세요"}, {"role": "user", "content": "가" * 8000}])
    assert reply.choices[0].message.content == "네"
    assert len(seen) == 1 and (seen[0]["temperature"], seen[0]["max_tokens"]) == (0.2, 64)
