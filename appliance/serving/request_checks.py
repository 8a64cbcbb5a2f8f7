"""The client's mistakes, decided at the agent endpoint before the model server is called.

    limits = RequestLimits.for_context(8192)        # body limit derived from the model's context
    body = await read_body(request, limits)         # RequestError(413) past limits.max_body_bytes
    check_request(body, limits)                     # RequestError(400) naming the field and the limit

A request the model server would refuse (an 18 MB body, a message with role "wizard", ``max_tokens: "100"``)
is refused here, as a 4xx in OpenAI's error shape whose ``param`` is the field, and never forwarded: the client
sees its own mistake, not a 502 with the model server's validation dump.

The body limit is ``max_body_bytes`` when configured; else derived from the model's context
(``BODY_BYTES_PER_TOKEN`` bytes of JSON per context token plus ``BODY_OVERHEAD_BYTES`` for tools and structure:
a body that large cannot hold a prompt that fits); else ``DEFAULT_MAX_BODY_BYTES``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from .executors import RequestError

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ROLES", "RequestLimits", "check_request", "read_body"]

ROLES = ("system", "user", "assistant", "tool")
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024  # when neither a maximum nor the model's context is known
BODY_BYTES_PER_TOKEN = 8  # a Hangul syllable as a JSON \uXXXX escape is 6 bytes and about one token
BODY_OVERHEAD_BYTES = 256 * 1024  # tools entries, message structure, the kopa extension
# a floor on the prompt's tokens: ordinary text has at least one token per 4 UTF-8 bytes, so a prompt refused
# as too long is too long for any tokenizer (bench.agents.step.approx_tokens errs the other way, to stop early)
PROMPT_BYTES_PER_TOKEN = 4
TOOL_CHOICES = ("auto", "none", "required")


@dataclass(frozen=True)
class RequestLimits:
    """How large a chat request may be: the body in bytes, and the model's context in tokens (None: unknown)."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    context_tokens: int | None = None
    source: str = "the endpoint's default"  # where max_body_bytes came from, for the 413's message

    @classmethod
    def for_context(cls, context_tokens: int | None, max_body_bytes: int | None = None) -> RequestLimits:
        """A configured ``max_body_bytes`` wins; else the limit derived from ``context_tokens``; else the default.

        Raises:
            ValueError: a limit is not positive.
        """
        for name, value in (("context_tokens", context_tokens), ("max_body_bytes", max_body_bytes)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be positive, got {value}")
        if max_body_bytes is not None:
            return cls(max_body_bytes, context_tokens, "the configured maximum")
        if context_tokens is not None:
            return cls(context_tokens * BODY_BYTES_PER_TOKEN + BODY_OVERHEAD_BYTES, context_tokens,
                       f"derived from the model's context of {context_tokens:,} tokens")
        return cls()


async def read_body(request: Request, limits: RequestLimits) -> Any:
    """The request's JSON body, read up to ``limits.max_body_bytes`` (a declared length over it: nothing read).

    Raises:
        RequestError: the body is over the limit (413), or not JSON (400).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise _too_large(f"{int(declared):,} bytes", limits)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise _too_large(f"more than {limits.max_body_bytes:,} bytes", limits)
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except ValueError as exc:  # UnicodeDecodeError too
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise RequestError(f"the request body is not JSON{where}; send a chat-completions request object",
                           code="invalid_json") from None


def _too_large(size: str, limits: RequestLimits) -> RequestError:
    return RequestError(f"the request body is {size}; the limit is {limits.max_body_bytes:,} bytes ({limits.source})",
                        code="request_too_large", status=413)


def check_request(body: Any, limits: RequestLimits) -> None:
    """Refuse a request the model server would refuse, or that asks what the endpoint cannot do.

    Raises:
        RequestError: the first mistake found, naming the field (``param``) and the allowed values.
    """
    if not isinstance(body, dict):
        raise RequestError(f"the request body must be a JSON object, got {_kind(body)}", code="invalid_type")
    _check_messages(body.get("messages"))
    context = limits.context_tokens
    _number(body, "max_tokens", 1, context, integer=True)
    _number(body, "max_completion_tokens", 1, context, integer=True)
    _number(body, "n", 1, 1, integer=True, why="the agent endpoint answers with one choice")
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    _number(body, "presence_penalty", -2, 2)
    _number(body, "frequency_penalty", -2, 2)
    _number(body, "seed", None, None, integer=True)
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError(f"stream must be true or false, got {_kind(stream)}", param="stream", code="invalid_type")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise RequestError(f"tools must be a list of tool objects, got {_kind(tools)}", param="tools",
                           code="invalid_type")
    choice = body.get("tool_choice")
    if choice is not None and not isinstance(choice, dict) and choice not in TOOL_CHOICES:
        raise RequestError(f"tool_choice must be one of {', '.join(TOOL_CHOICES)} or a function object, got "
                           f"{_show(choice)}", param="tool_choice", code="invalid_value")
    kopa = body.get("kopa")
    if kopa is not None:
        if not isinstance(kopa, dict):
            raise RequestError(f"kopa must be an object, got {_kind(kopa)}", param="kopa", code="invalid_type")
        _number(kopa, "max_turns", 1, None, integer=True, prefix="kopa.")
        _number(kopa, "max_calls", 0, None, integer=True, prefix="kopa.")
    if context is not None:
        prompt = _prompt_floor(body["messages"])
        if prompt > context:
            raise RequestError(
                f"the messages are at least {prompt:,} tokens; the model's context is {context:,} tokens. "
                f"Shorten or drop messages", param="messages", code="context_length_exceeded")


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise RequestError(f"messages must be a non-empty list of message objects, got {_kind(messages)}",
                           param="messages", code="invalid_type" if not isinstance(messages, list) else "invalid_value")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RequestError(f"messages[{i}] must be a message object, got {_kind(message)}",
                               param=f"messages[{i}]", code="invalid_type")
        role = message.get("role")
        if role not in ROLES:
            raise RequestError(f"messages[{i}].role is {_show(role)}; a role is one of {', '.join(ROLES)}",
                               param=f"messages[{i}].role", code="invalid_value")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise RequestError(f"messages[{i}].content must be a string or a list of content parts, got "
                               f"{_kind(content)}", param=f"messages[{i}].content", code="invalid_type")


def _number(body: Mapping[str, Any], field: str, low: float | None, high: float | None, *, integer: bool = False,
            why: str = "", prefix: str = "") -> None:
    value = body.get(field)
    if value is None:
        return
    name = prefix + field
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float)) and math.isfinite(value)
    if isinstance(value, bool) or not ok_type:
        raise RequestError(f"{name} must be {kind}{_range(low, high)}, got {_kind(value)}", param=name,
                           code="invalid_type")
    if (low is not None and value < low) or (high is not None and value > high):
        limit = " (the model's context)" if field in ("max_tokens", "max_completion_tokens") and high else ""
        raise RequestError(f"{name} must be {kind}{_range(low, high)}{limit}, got {value}"
                           + (f": {why}" if why else ""), param=name, code="invalid_value")


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" equal to {low:,}" if low == high else f" from {low:,} to {high:,}"
    if low is not None:
        return f" of at least {low:,}"
    return ""


def _prompt_floor(messages: list[dict[str, Any]]) -> int:
    size = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            size += len(content.encode("utf-8"))
        elif isinstance(content, list):
            size += sum(len(str(part.get("text", "")).encode("utf-8")) for part in content if isinstance(part, dict))
    return size // PROMPT_BYTES_PER_TOKEN


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "an object"}
    return f"{_show(value)} ({names[type(value)]})" if type(value) in (str, int, float, bool) else \
        names.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, (str, int, float, bool, type(None))) else \
        type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."
