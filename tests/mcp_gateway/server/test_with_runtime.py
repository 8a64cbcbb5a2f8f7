"""The gateway over the real ToolRuntime and platform clients, against the sandbox on loopback.

The catalog here is the committed core spec files read directly; once ``load_catalog`` lands
this becomes the full catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_gateway.catalog.spec import ToolSpec
from mcp_gateway.clients import ClientSet, PlatformURLs, SecretStore
from mcp_gateway.runtime.runtime import ToolRuntime
from mcp_gateway.server import create_gateway_app, default_toolsets
from recorder.sandbox import PLATFORM_IDS, KeyStore
from recorder.sandbox.loopback import LoopbackServer
from tests.mcp_gateway.server.conftest import mcp_client

SPEC_DIR = Path(__file__).resolve().parents[3] / "mcp_gateway" / "catalog" / "specs"


class SpecFileCatalog:
    """``tools`` and ``get`` over the core spec files."""

    def __init__(self) -> None:
        specs = [ToolSpec.model_validate(d) for f in sorted(SPEC_DIR.glob("*.json")) for d in json.loads(f.read_text())]
        self.tools = {s.name: s for s in specs}

    def get(self, name: str) -> ToolSpec:
        return self.tools[name]


@pytest.fixture
def clients(sandbox_origin: str, secrets: SecretStore) -> ClientSet:
    return ClientSet(PlatformURLs.sandbox(sandbox_origin), secrets=secrets)


@pytest.fixture
def secrets(keys: KeyStore) -> SecretStore:
    return SecretStore({p: keys.first(p) for p in PLATFORM_IDS})


@pytest.fixture
def runtime(clients: ClientSet, secrets: SecretStore) -> ToolRuntime:
    return ToolRuntime(SpecFileCatalog(), clients, secrets, profile="chat")


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
        tools = (await client.list_tools()).tools
        for tool in tools:
            if tool.input_schema.get("required"):
                continue
            args = {"numOfRows": 2} if "numOfRows" in tool.input_schema["properties"] else {}
            result = await client.call_tool(tool.name, args)  # the client checks the output schema
            assert all(key not in result.content[0].text for key in keys.all_values())  # type: ignore[union-attr]
            if not result.is_error:
                succeeded.add(runtime.catalog.tools[tool.name].platform)
                assert result.structured_content["total_count"] is not None  # type: ignore[index]
    platforms = {s.platform for s in runtime.catalog.tools.values()}
    assert succeeded == platforms
