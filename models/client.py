"""One client for every OpenAI-compatible chat endpoint the appliance talks to, on the ``openai`` SDK.

    async with ChatClient(settings.models.judge, role="judge") as client:
        reply = await client.complete(messages, temperature=0, max_tokens=512)
        reply.content, reply.message, reply.usage

    with ChatClient(profile, role="writer") as client:       # from sync code: the SDK's sync client
        reply = client.complete_sync(messages)

Retries and timeouts are the SDK's own: a timeout, a connection error, HTTP 408, 409, 429 or 5xx is sent again
up to ``profile.max_retries`` times with exponential backoff (0.5 s doubling, jittered, a server's
``Retry-After`` honoured); any other 4xx is not, since a refused request is refused again. The profile's
``api_key`` is the only credential sent (none when it is empty: the SDK's
``OPENAI_API_KEY`` is not read, so a key meant for one endpoint never reaches another), and it appears in no message, repr or log line.

The reply is the completion's JSON as the server sent it (lone surrogates replaced), read leniently: servers
differ in what they put in a message, and a consumer decides what it needs (``ChatReply.message``). A body that
is no chat completion is an ``EndpointError`` like a failed request. Every ``EndpointError`` says how the call
failed as an ``ErrorKind`` (timeout, unreachable, context too long, HTTP error, bad reply) and carries the HTTP
status when there was one; this module is the one place that reads a server's error body to tell a context
overflow from any other 400.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import openai

from mcp_gateway.text import scrub_surrogates

from .errors import EndpointError, ErrorKind
from .settings import EndpointProfile

__all__ = ["ChatClient", "ChatReply"]

_SHOWN_BODY_CHARS = 500

# How servers say a prompt is longer than the model's context, in a 400 (or 413/422) body. The error's ``code`` or
# ``type`` when the server sets one (OpenAI and vLLM's newer builds: context_length_exceeded; llama.cpp:
# exceed_context_size_error), else its message (vLLM: "maximum context length is N tokens"; llama-cpp-python:
# "Requested tokens (N) exceed context window of M").
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_TEXT = re.compile(r"context (window|length|size)|maximum context|too many tokens|n_ctx", re.IGNORECASE)


@dataclass(frozen=True)
class ChatReply:
    """One chat completion: its first choice's message, the token usage, and the whole body."""

    message: dict[str, Any]
    usage: dict[str, Any] | None
    body: dict[str, Any]

    @property
    def content(self) -> str | None:
        """The message's text; None when it has none (a reply of tool calls only, or an empty one)."""
        content = self.message.get("content")
        return content if isinstance(content, str) else None


# Key providers that yield no key: the SDK then sends no Authorization header (a plain "" would make it look for
# OPENAI_API_KEY, or refuse to start).
def _no_key() -> str:
    return ""


async def _no_key_async() -> str:
    return ""


def _context_overflow(exc: openai.APIStatusError) -> bool:
    """Whether an HTTP error is the server refusing a prompt longer than the model's context."""
    if exc.status_code not in (400, 413, 422):
        return False
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    if {str(error.get("code")), str(error.get("type"))} & _CONTEXT_CODES:
        return True
    return bool(_CONTEXT_TEXT.search(exc.response.text[:_SHOWN_BODY_CHARS * 4]))


class ChatClient:
    """Chat completions from the endpoint of one ``EndpointProfile``; an async and a sync context manager."""

    def __init__(self, profile: EndpointProfile, *, role: str = "model") -> None:
        """
        Raises:
            ValueError: the profile has no base URL or model (the message names the setting).
        """
        self.profile = profile.required(role)
        self.role = role
        self._async: openai.AsyncOpenAI | None = None
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._sync: openai.OpenAI | None = None

    def __repr__(self) -> str:
        return f"ChatClient(role={self.role!r}, url={self.url!r}, model={self.profile.model!r})"

    @property
    def url(self) -> str:
        return f"{str(self.profile.base_url).rstrip('/')}/chat/completions"

    def _options(self, *, asynchronous: bool) -> dict[str, Any]:
        key = self.profile.api_key.get_secret_value() or (_no_key_async if asynchronous else _no_key)
        return {"base_url": str(self.profile.base_url).rstrip("/"), "api_key": key,
                "timeout": self.profile.timeout_s, "max_retries": self.profile.max_retries}

    async def _async_client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._async is not None and self._async_loop is not loop:  # an SDK client belongs to one event loop
            await self._close_async()  # the replaced one's connections are closed, not left to the collector
        if self._async is None:
            self._async, self._async_loop = openai.AsyncOpenAI(**self._options(asynchronous=True)), loop
        return self._async

    async def _close_async(self) -> None:
        client, loop = self._async, self._async_loop
        self._async = self._async_loop = None
        if client is None:
            return
        if loop is None or loop is asyncio.get_running_loop():
            await client.close()
        elif loop.is_running():
            asyncio.run_coroutine_threadsafe(client.close(), loop)  # its loop runs on in another thread: closed there
        else:
            with contextlib.suppress(Exception):  # its loop has ended: what can still be closed is closed here
                await client.close()

    def _sync_client(self) -> openai.OpenAI:
        if self._sync is None:
            self._sync = openai.OpenAI(**self._options(asynchronous=False))
        return self._sync

    def _request(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None,
                 params: Mapping[str, Any], timeout_s: float | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.profile.model, "messages": list(messages)}
        defaults = {"temperature": self.profile.temperature, "max_tokens": self.profile.max_tokens,
                    "seed": self.profile.seed}
        body.update({k: v for k, v in defaults.items() if v is not None})
        body.update({k: v for k, v in params.items() if v is not None})
        if tools:
            body["tools"] = list(tools)
        else:
            body.pop("tool_choice", None)
        extra = {**self.profile.extra_body, **body.pop("extra_body", {})}
        request: dict[str, Any] = {"model": body.pop("model"), "messages": body.pop("messages"),
                                   "extra_body": {**body, **extra} or None}
        if not self.profile.api_key.get_secret_value():
            request["extra_headers"] = {"Authorization": openai.Omit()}  # no key: no header at all
        if timeout_s is not None:
            request["timeout"] = timeout_s
        return request

    async def complete(self, messages: Sequence[Mapping[str, Any]], *,
                       tools: Sequence[Mapping[str, Any]] | None = None, timeout_s: float | None = None,
                       **params: Any) -> ChatReply:
        """One chat completion. ``params`` (temperature, max_tokens, seed, tool_choice, response_format,
        extra_body, …) override the profile's; None values are left out.

        Raises:
            EndpointError: no reply after the retries, an HTTP error, or a body that is no chat completion.
        """
        request = self._request(messages, tools, params, timeout_s)
        try:
            sdk = await self._async_client()
            raw = await sdk.chat.completions.with_raw_response.create(**request)
        except openai.OpenAIError as exc:
            raise self._failure(exc, request) from None
        return self._reply(raw.http_response.text)

    def complete_sync(self, messages: Sequence[Mapping[str, Any]], *,
                      tools: Sequence[Mapping[str, Any]] | None = None, timeout_s: float | None = None,
                      **params: Any) -> ChatReply:
        """``complete`` for code without an event loop.

        Raises:
            EndpointError: as ``complete``.
        """
        request = self._request(messages, tools, params, timeout_s)
        try:
            raw = self._sync_client().chat.completions.with_raw_response.create(**request)
        except openai.OpenAIError as exc:
            raise self._failure(exc, request) from None
        return self._reply(raw.http_response.text)

    def _failure(self, exc: openai.OpenAIError, request: Mapping[str, Any]) -> EndpointError:
        timeout = request.get("timeout", self.profile.timeout_s)
        tries = f" (after {self.profile.max_retries} retries)" if self.profile.max_retries else ""
        if isinstance(exc, openai.APITimeoutError):
            return EndpointError(f"{self.url}: no reply within {timeout:.1f} s{tries}", url=self.url,
                                 kind=ErrorKind.ENDPOINT_TIMEOUT)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc  # the transport's own error (ConnectError, RemoteProtocolError, ...)
            return EndpointError(f"{self.url}: cannot connect{tries}: {type(cause).__name__}: {cause}", url=self.url,
                                 kind=ErrorKind.ENDPOINT_UNREACHABLE)
        if isinstance(exc, openai.APIStatusError):
            text = exc.response.text[:_SHOWN_BODY_CHARS]
            kind = ErrorKind.CONTEXT_TOO_LONG if _context_overflow(exc) else ErrorKind.ENDPOINT_HTTP
            return EndpointError(f"{self.url} answered HTTP {exc.status_code}: {text}", url=self.url, kind=kind,
                                 status=exc.status_code)
        return EndpointError(f"{self.url}: {type(exc).__name__}: {exc}", url=self.url, kind=ErrorKind.ENDPOINT_CLIENT)

    def _reply(self, text: str) -> ChatReply:
        try:
            body = scrub_surrogates(json.loads(text))  # a lone \udXXX escape could not be written back out
            message = body["choices"][0]["message"]
        except (ValueError, LookupError, TypeError):
            raise EndpointError(f"{self.url} answered 200 with no chat completion: {text[:_SHOWN_BODY_CHARS]}",
                                url=self.url, kind=ErrorKind.ENDPOINT_BAD_REPLY) from None
        if not isinstance(message, dict):
            raise EndpointError(f"{self.url}: choices[0].message is {type(message).__name__}, not an object",
                                url=self.url, kind=ErrorKind.ENDPOINT_BAD_REPLY)
        usage = body.get("usage")
        return ChatReply(message=message, usage=usage if isinstance(usage, dict) else None, body=body)

    async def aclose(self) -> None:
        await self._close_async()
        self.close()

    def close(self) -> None:
        client, self._sync = self._sync, None
        if client is not None:
            client.close()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
