"""An ASGI middleware that refuses an HTTP request body over a size limit with 413.

A declared ``Content-Length`` over the limit is refused before a byte is read. Otherwise the
body is read here, counted as it streams in (a chunked body declares no length, and a declared
length is only a claim), and handed to the app only once it is known to fit: the app never
parses a partial body, and at most ``max_bytes`` of it are ever held.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..limits import SETTINGS_PREFIX

# JSON-RPC "Invalid Request": the answer is readable by an MCP client as well as by a person.
INVALID_REQUEST = -32600


class BodySizeLimit:
    """Wraps ``app``; HTTP requests with a body over ``max_bytes`` get 413 and a JSON-RPC error naming the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send, f"{declared:,} bytes")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away mid-body: nothing to answer
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send, f"more than {self.max_bytes:,} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _refuse(self, send: Send, size: str) -> None:
        text = (f"request body is {size}; the limit is {self.max_bytes:,} bytes "
                f"(setting {SETTINGS_PREFIX}MAX_REQUEST_BYTES)")
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": text}}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server (h11, httptools) refuses a malformed length itself
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the whole body once, then passes on the client's later messages (disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
