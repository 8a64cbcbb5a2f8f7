"""The gateway as the console reaches it over HTTP: ``/healthz``, ``/metrics``, and MCP tool calls.

    client = GatewayClient(GatewayEndpoint("http://127.0.0.1:8765", SecretStr(token)))
    health = await client.health()            # raises GatewayDown when it does not answer
    result = await client.call_tool("search_laws", {"query": "민법"})   # the official MCP client

The token is a ``SecretStr``: it goes into the Authorization header and nowhere else; the console
shows ``masked_token`` only.

Errors (the MCP client raises exception groups; they are unwrapped here and never leave this module)::

    GatewayError            the gateway did not give an answer the console can show
     ├── GatewayDown        not running, wrong URL, went away, or timed out
     └── GatewayRefused     it answered 401/403: the token is wrong
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr

from .metrics import MetricsSnapshot, parse_metrics

PROBE_TIMEOUT_S = 3.0
CALL_TIMEOUT_S = 60.0


class GatewayError(Exception):
    """The gateway did not give an answer the console can show; the text says why and what to do."""


class GatewayDown(GatewayError, ConnectionError):
    """The gateway did not answer (not running, wrong URL, it went away, or it timed out)."""


class GatewayRefused(GatewayError):
    """The gateway answered 401 or 403: it does not accept the console's token."""


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order; ``exc`` itself when it is not a group."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _translate(exc: Exception, where: str, statuses: list[int]) -> GatewayError | None:
    """The ``GatewayError`` for what the MCP client raised, or None for anything that is not about the gateway."""
    refused = [s for s in statuses if s in (401, 403)]
    if refused:
        return GatewayRefused(f"{where} refused the token (HTTP {refused[0]}): give the gateway's token with "
                              "--token or KOPA_TUI_TOKEN")
    leaves = _leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, httpx2.TimeoutException):
            return GatewayDown(f"{where}: no answer within {CALL_TIMEOUT_S:g} s ({type(leaf).__name__})")
    for leaf in leaves:
        if isinstance(leaf, (httpx2.HTTPError, OSError)):
            return GatewayDown(f"{where}: not answering ({type(leaf).__name__}); is the gateway running there?")
    for leaf in leaves:
        if isinstance(leaf, MCPError):
            failed = [s for s in statuses if s >= 400]
            status = f" (HTTP {failed[0]})" if failed else ""
            return GatewayError(f"{where}: the gateway returned an error{status}: {leaf}")
    return None


@dataclass(frozen=True)
class GatewayEndpoint:
    url: str  # origin, e.g. http://127.0.0.1:8765 (the MCP endpoint is url + /mcp)
    token: SecretStr

    @property
    def masked_token(self) -> str:
        raw = self.token.get_secret_value()
        return "•" * 6 if len(raw) < 12 else f"{raw[:3]}…{raw[-2:]}"


@dataclass(frozen=True)
class Health:
    tools: int
    profile: str
    toolsets: tuple[str, ...]


@dataclass(frozen=True)
class CallOutcome:
    """One tool call through the gateway, as the try-it form shows it."""

    is_error: bool
    structured: dict[str, Any] | None
    text: str
    ms: float


class GatewayClient:
    def __init__(self, endpoint: GatewayEndpoint) -> None:
        self.endpoint = endpoint

    async def _get(self, path: str) -> httpx.Response:
        try:
            async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as http:
                response = await http.get(self.endpoint.url.rstrip("/") + path)
        except httpx.HTTPError as exc:
            raise GatewayDown(f"{self.endpoint.url}{path}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise GatewayDown(f"{self.endpoint.url}{path}: HTTP {response.status_code}")
        return response

    async def health(self) -> Health:
        data = (await self._get("/healthz")).json()
        return Health(int(data.get("tools", 0)), str(data.get("profile", "?")), tuple(data.get("toolsets", ())))

    async def metrics(self) -> MetricsSnapshot:
        return parse_metrics((await self._get("/metrics")).text, at=time.monotonic())

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        """Call ``tool`` on ``/mcp`` with the official client (one MCP session per call).

        Raises:
            GatewayDown: the gateway did not answer, or not in time.
            GatewayRefused: it refused the token.
            GatewayError: it answered with a protocol error.
        """
        headers = {"Authorization": f"Bearer {self.endpoint.token.get_secret_value()}"}
        statuses: list[int] = []  # the MCP client hides HTTP statuses behind MCPError; a hook keeps them

        async def keep_status(response: httpx2.Response) -> None:
            statuses.append(response.status_code)

        where = self.endpoint.url.rstrip("/") + "/mcp"
        started = time.perf_counter()
        try:
            async with (httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S,
                                           event_hooks={"response": [keep_status]}) as http,
                        Client(streamable_http_client(where, http_client=http)) as client):
                result = await client.call_tool(tool, arguments)
        except Exception as exc:  # noqa: BLE001 - narrowed by _translate; anything else goes on unchanged
            error = _translate(exc, where, statuses)
            if error is None:
                raise
            raise error from None  # the cause (its frames hold the headers) stays out of every report
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        return CallOutcome(bool(result.is_error), result.structured_content, text,
                           (time.perf_counter() - started) * 1000)
