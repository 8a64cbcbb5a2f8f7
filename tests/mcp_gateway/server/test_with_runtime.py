"""The gateway over the real catalog, ToolRuntime and platform clients, against the sandbox on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_gateway.catalog import load_catalog
from mcp_gateway.clients import ClientSet, PlatformURLs, SecretStore
from mcp_gateway.runtime.runtime import ToolRuntime
from mcp_gateway.server import create_gateway_app, default_toolsets
from sandbox import PLATFORM_IDS, KeyStore
from sandbox.loopback import LoopbackServer
from tests.mcp_gateway.server.conftest import mcp_client


@pytest.fixture
def clients(sandbox_origin: str, secrets: SecretStore) -> ClientSet:
    return ClientSet(PlatformURLs.sandbox(sandbox_origin), secrets=secrets)


@pytest.fixture
def secrets(keys: KeyStore) -> SecretStore:
    return SecretStore({p: keys.first(p) for p in PLATFORM_IDS})


@pytest.fixture
def runtime(clients: ClientSet, secrets: SecretStore) -> ToolRuntime:
    return ToolRuntime(load_catalog(), clients, secrets, profile="chat")


@pytest.fixture
def gateway(runtime: ToolRuntime, clients: ClientSet) -> Iterator[str]:
    """The clients open and close in the gateway's own event loop (its lifespan)."""
    app = create_gateway_app(runtime, tokens={"t"}, toolsets=default_toolsets(runtime.catalog), resources=[clients])
    with LoopbackServer(app, lifespan=True) as server:  # the session managers run in the lifespan
        yield server.origin


async def test_every_platform_answers_through_mcp_and_no_key_leaks(gateway: str, runtime: ToolRuntime,
                                                                   keys: KeyStore) -> None:
    succeeded: set[str] = set()
    async with mcp_client(f"{gateway}/mcp", token="t") as client:
        tools, cursor = [], None
        while True:  # every page of tools/list
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            if (cursor := page.next_cursor) is None:
                break
        assert len(tools) == len(runtime.catalog) >= 2_318
        core = [t for t in tools if runtime.catalog.tools[t.name].domain != "district"]
        long_tail = [t for t in tools if runtime.catalog.tools[t.name].domain == "district"]
        for tool in core + long_tail[::200]:  # every core tool, and a sample of the dataset tools
            if tool.input_schema.get("required"):
                continue
            args = {"numOfRows": 2} if "numOfRows" in tool.input_schema["properties"] else {}
            result = await client.call_tool(tool.name, args)  # the client checks the output schema
            assert all(key not in result.content[0].text for key in keys.all_values())  # type: ignore[union-attr]
            if not result.is_error:
                succeeded.add(runtime.catalog.tools[tool.name].platform)
                if runtime.catalog.tools[tool.name].endpoint is not None:  # upstream tools report the total
                    assert result.structured_content["total_count"] is not None  # type: ignore[index]
    platforms = {s.platform for s in runtime.catalog.tools.values()}
    assert succeeded == platforms and len(platforms) == 11  # ten platforms and the built-ins
