"""The gateway as the console reaches it over HTTP: ``/healthz``, ``/metrics``, and MCP tool calls.

    client = GatewayClient(GatewayEndpoint("http://127.0.0.1:8765", SecretStr(token)))
    health = await client.health()            # raises GatewayDown when it does not answer
    result = await client.call_tool("search_laws", {"query": "민법"})   # the official MCP client

The token is a ``SecretStr``: it goes into the Authorization header and nowhere else; the console
shows ``masked_token`` only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from .metrics import MetricsSnapshot, parse_metrics

PROBE_TIMEOUT_S = 3.0
CALL_TIMEOUT_S = 60.0


class GatewayDown(ConnectionError):
    """The gateway did not answer (not running, wrong URL, or it went away)."""


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
            GatewayDown: the gateway did not answer or refused the token.
        """
        headers = {"Authorization": f"Bearer {self.endpoint.token.get_secret_value()}"}
        started = time.perf_counter()
        try:
            async with (httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as http,
                        Client(streamable_http_client(self.endpoint.url.rstrip("/") + "/mcp", http_client=http))
                        as client):
                result = await client.call_tool(tool, arguments)
        except (httpx2.HTTPError, OSError) as exc:
            raise GatewayDown(f"{self.endpoint.url}/mcp: {type(exc).__name__}") from exc
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        return CallOutcome(bool(result.is_error), result.structured_content, text,
                           (time.perf_counter() - started) * 1000)
