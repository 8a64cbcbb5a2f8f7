"""Fixtures: the gateway app on the toy runtime, served on a real loopback port, and an MCP client factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_gateway.server import Telemetry, ToolSet, create_gateway_app, default_toolsets
from sandbox.loopback import LoopbackServer
from tests.mcp_gateway.server.toy_runtime import ToyRuntime

TOKEN = "test-gateway-token-1"
PAGE_SIZE = 100


@pytest.fixture
def runtime() -> ToyRuntime:
    return ToyRuntime()


@pytest.fixture
def telemetry() -> Telemetry:
    return Telemetry()


@pytest.fixture
def gateway_origin(runtime: ToyRuntime, telemetry: Telemetry) -> Iterator[str]:
    """The gateway with the default sets plus a task set, on 127.0.0.1 with its lifespan on."""
    toolsets = default_toolsets(runtime.catalog, pinned=["write_note", "read_note"])
    toolsets["task/cb"] = ToolSet("task/cb", ("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision"))
    app = create_gateway_app(runtime, tokens={TOKEN, "other-token"}, toolsets=toolsets, page_size=PAGE_SIZE,
                             telemetry=telemetry)
    with LoopbackServer(app, lifespan=True) as server:  # the session managers run in the lifespan
        yield server.origin


@asynccontextmanager
async def mcp_client(url: str, token: str = TOKEN) -> AsyncIterator[Client]:
    """The official client over streamable HTTP with a bearer token."""
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        yield client
