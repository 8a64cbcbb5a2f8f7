"""``models.ChatClient`` against a real chat-completions server on loopback: what is re-sent, what is not, and
that the key goes nowhere but the Authorization header."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from models.client import ChatClient
from models.errors import EndpointError, ErrorKind
from models.settings import EndpointProfile
from tests.chat_server import serve_chat, stop

KEY = "sk-client-test-7f3a"
FAST_RETRY = {"retry-after-ms": "10"}  # the SDK honours a server's delay: the retry tests need not wait 0.5 s


def completion(content: Any) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}}


@dataclass
class Script:
    """Replies in order (status, payload[, headers]); when they run out, a plain completion."""

    replies: list[tuple[Any, ...]] = field(default_factory=list)
    requests: list[tuple[dict[str, Any], dict[str, str]]] = field(default_factory=list)
    delay_s: float = 0.0

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Any, ...]:
        self.requests.append((body, {k.lower(): v for k, v in headers.items()}))
        reply = self.replies.pop(0) if self.replies else (200, completion("답"))  # chosen on arrival, not late
        if self.delay_s:
            time.sleep(self.delay_s)
        return reply


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[Script, str]]:
    script = Script()
    server, base_url = serve_chat(script)
    yield script, base_url
    stop(server)


@pytest.fixture
def script(endpoint) -> Script:
    script = endpoint[0]
    script.replies.clear()
    script.requests.clear()
    script.delay_s = 0.0
    return script


def profile(endpoint, **fields: Any) -> EndpointProfile:
    return EndpointProfile(**{"base_url": endpoint[1], "model": "m", "api_key": KEY, **fields})


MESSAGES = [{"role": "user", "content": "안녕"}]


async def test_a_429_and_a_503_are_sent_again_until_an_answer_comes(endpoint, script):
    script.replies += [(429, {"error": {"message": "slow down"}}, FAST_RETRY),
                       (503, {"error": {"message": "overloaded"}}, FAST_RETRY)]
    async with ChatClient(profile(endpoint, max_retries=2)) as client:
        reply = await client.complete(MESSAGES)
    assert (reply.content, reply.usage) == ("답", {"prompt_tokens": 5, "completion_tokens": 2})
    assert len(script.requests) == 3


async def test_a_5xx_past_the_retries_is_an_http_error_naming_the_status(endpoint, script):
    script.replies += [(500, {"error": {"message": f"boom {i}"}}, FAST_RETRY) for i in range(3)]
    async with ChatClient(profile(endpoint, max_retries=2)) as client:
        with pytest.raises(EndpointError, match=r"answered HTTP 500: .*boom 2") as caught:
            await client.complete(MESSAGES)
    assert (caught.value.kind, caught.value.status, len(script.requests)) == (ErrorKind.ENDPOINT_HTTP, 500, 3)


async def test_a_400_is_not_sent_again(endpoint, script):
    script.replies.append((400, {"error": {"message": "unknown model"}}, FAST_RETRY))
    async with ChatClient(profile(endpoint, max_retries=3)) as client:
        with pytest.raises(EndpointError, match="answered HTTP 400: .*unknown model") as caught:
            await client.complete(MESSAGES)
    assert (caught.value.kind, caught.value.status, len(script.requests)) == (ErrorKind.ENDPOINT_HTTP, 400, 1)


@pytest.mark.parametrize("error", [
    {"message": "This model's maximum context length is 8192 tokens. However, you requested 9001 tokens.",
     "type": "BadRequestError", "code": 400},                                                       # vLLM
    {"message": "the request exceeds the available context size, try increasing it",
     "type": "exceed_context_size_error", "code": 400},                                             # llama.cpp
    {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"},   # OpenAI
    {"message": "Requested tokens (9001) exceed context window of 8192"},                          # llama-cpp-python
])
async def test_a_400_for_a_prompt_past_the_context_is_context_too_long(endpoint, script, error):
    script.replies.append((400, {"error": error}))
    async with ChatClient(profile(endpoint, max_retries=3)) as client:
        with pytest.raises(EndpointError, match="answered HTTP 400") as caught:
            await client.complete(MESSAGES)
    assert (caught.value.kind, caught.value.status, len(script.requests)) == (ErrorKind.CONTEXT_TOO_LONG, 400, 1)


async def test_a_request_past_its_timeout_is_sent_again_then_reported(endpoint, script):
    script.delay_s = 1.5
    async with ChatClient(profile(endpoint, max_retries=1, timeout_s=0.3)) as client:
        with pytest.raises(EndpointError, match=r"no reply within 0\.3 s \(after 1 retries\)") as caught:
            await client.complete(MESSAGES)
    assert (caught.value.kind, caught.value.status) == (ErrorKind.ENDPOINT_TIMEOUT, None)
    assert len(script.requests) == 2


async def test_an_unreachable_endpoint_is_a_connection_error():
    from sandbox.loopback import free_port

    gone = EndpointProfile(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", max_retries=0)
    async with ChatClient(gone) as client:
        with pytest.raises(EndpointError, match="cannot connect") as caught:
            await client.complete(MESSAGES)
    assert (caught.value.kind, caught.value.status) == (ErrorKind.ENDPOINT_UNREACHABLE, None)


@pytest.mark.parametrize("body", ["<html>proxy error</html>", {"choices": []}, {"choices": [{"message": "hi"}]}])
async def test_a_body_that_is_no_chat_completion_is_an_endpoint_error(endpoint, script, body):
    script.replies.append((200, body))
    async with ChatClient(profile(endpoint)) as client:
        with pytest.raises(EndpointError, match="no chat completion|not an object") as caught:
            await client.complete(MESSAGES)
    assert caught.value.kind == ErrorKind.ENDPOINT_BAD_REPLY


async def test_the_request_carries_the_profile_and_the_call_overrides_it(endpoint, script):
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}}}}]
    fields = {"temperature": 0.2, "max_tokens": 64, "seed": 7, "extra_body": {"top_k": 20}}
    async with ChatClient(profile(endpoint, **fields)) as client:
        await client.complete(MESSAGES, tools=tools, tool_choice="auto", seed=11, model="other")
        await client.complete(MESSAGES, tool_choice="auto")  # no tools: no tool_choice either
    (first, _), (second, _) = script.requests
    assert first == {"model": "other", "messages": MESSAGES, "temperature": 0.2, "max_tokens": 64, "seed": 11,
                     "tools": tools, "tool_choice": "auto", "top_k": 20}
    assert second == {"model": "m", "messages": MESSAGES, "temperature": 0.2, "max_tokens": 64, "seed": 7,
                      "top_k": 20}


async def test_the_key_is_sent_as_a_bearer_token_and_logged_nowhere(endpoint, script, caplog):
    caplog.set_level(logging.DEBUG)
    script.replies.append((500, {"error": {"message": "x"}}, FAST_RETRY))
    client = ChatClient(profile(endpoint, max_retries=1))
    async with client:
        await client.complete(MESSAGES)
    script.replies.append((401, {"error": {"message": "bad key"}}))
    with client, pytest.raises(EndpointError) as caught:
        client.complete_sync(MESSAGES)
    assert [h["authorization"] for _, h in script.requests] == [f"Bearer {KEY}"] * 3
    assert caplog.records  # the SDK and httpx did log at DEBUG: the check below looked at something
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert KEY not in logged
    assert KEY not in str(caught.value) and KEY not in repr(client) and KEY not in repr(client.profile)


async def test_an_empty_key_sends_no_authorization_and_never_reads_openai_api_key(endpoint, script, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-someone-elses")
    async with ChatClient(profile(endpoint, api_key="")) as client:
        await client.complete(MESSAGES)
    with ChatClient(profile(endpoint, api_key="")) as client:
        client.complete_sync(MESSAGES)
    assert ["authorization" in h for _, h in script.requests] == [False, False]


def test_the_sync_path_reads_the_same_reply_and_scrubs_lone_surrogates(endpoint, script):
    script.replies.append((200, '{"choices": [{"message": {"role": "assistant", "content": "a\\udc4cb"}}]}'))
    with ChatClient(profile(endpoint)) as client:
        reply = client.complete_sync(MESSAGES)
    assert reply.content == "a\ufffdb"
    assert reply.usage is None


def test_a_client_used_from_a_second_event_loop_closes_the_first_loops_sdk_client(endpoint, script):
    client = ChatClient(profile(endpoint))

    async def ask() -> object:
        assert (await client.complete(MESSAGES)).content == "답"
        return client._async  # the SDK client of this loop (with its connection pool): what must not leak

    first = asyncio.run(ask())
    second = asyncio.run(ask())  # a new loop: an SDK client belongs to one, so a new one is made
    assert second is not first and first.is_closed() and not second.is_closed()
    asyncio.run(client.aclose())
    assert second.is_closed() and len(script.requests) == 2


def test_a_profile_without_model_names_the_setting_to_add():
    with pytest.raises(ValueError, match=r"needs model: set KOPA_MODELS__WRITER__MODEL \(kopa\.toml \[models\.writer\]"):
        ChatClient(EndpointProfile(base_url="http://127.0.0.1:1/v1"), role="writer")
