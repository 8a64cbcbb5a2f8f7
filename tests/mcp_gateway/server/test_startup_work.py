"""What the gateway's start-up does once, and what it leaves until it serves.

Each tool's MCP listing (its schemas) is built once per runtime, although the tool is in ``all``, its platform's
set and its domain's set; the search set's index is built after the app starts serving (a background thread in the
lifespan), so ``/healthz`` does not wait for it, and a search that comes first builds it itself, once.
"""

from __future__ import annotations

import time

import pytest

from mcp_gateway.server import Telemetry, ToolSet, create_gateway_app, default_toolsets
from mcp_gateway.server import mcp_server
from mcp_gateway.server.mcp_server import GatewayHandlers
from sandbox.loopback import LoopbackServer
from tests.mcp_gateway.server.conftest import TOKEN, mcp_client
from tests.mcp_gateway.server.toy_runtime import ToyRuntime

CB = "get_dart_convertible_bond_issuance_decision"


@pytest.fixture
def built(monkeypatch) -> dict[str, int]:
    """How many listings and search indexes were built."""
    counts = {"listings": 0, "indexes": 0}
    listing, index = mcp_server.mcp_tool, mcp_server.NgramIndex

    def counting_listing(*args, **kwargs):
        counts["listings"] += 1
        return listing(*args, **kwargs)

    def counting_index(*args, **kwargs):
        counts["indexes"] += 1
        return index(*args, **kwargs)

    monkeypatch.setattr(mcp_server, "mcp_tool", counting_listing)
    monkeypatch.setattr(mcp_server, "NgramIndex", counting_index)
    return counts


def _app(runtime: ToyRuntime):
    toolsets = default_toolsets(runtime.catalog, pinned=["write_note", "read_note"])
    toolsets["task/cb"] = ToolSet("task/cb", ("find_dart_corp_code", CB))
    return create_gateway_app(runtime, tokens={TOKEN}, toolsets=toolsets, telemetry=Telemetry()), toolsets


async def test_each_tool_is_listed_once_and_the_search_index_is_built_once_the_app_serves(built) -> None:
    runtime = ToyRuntime()
    app, toolsets = _app(runtime)
    in_sets = sum(len(t.resolve(runtime.catalog)) for t in toolsets.values() if t.mode != "search")
    assert in_sets > 2 * len(runtime.catalog.tools)  # every tool is in several sets ...
    assert built["listings"] == len(runtime.catalog.tools)  # ... and listed once
    assert built["indexes"] == 0  # not before the app serves
    with LoopbackServer(app, lifespan=True) as server:
        deadline = time.monotonic() + 30
        while built["indexes"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert built["indexes"] == 1  # built in the background once it serves
        async with mcp_client(f"{server.origin}/mcp/search") as client:
            found = await client.call_tool("search_tools", {"query": "전환사채 발행 결정", "limit": 3})
        async with mcp_client(f"{server.origin}/mcp/platform/dart") as client:
            listed = await client.list_tools()
    assert found.structured_content["tools"][0]["name"] == CB  # type: ignore[index]
    assert built["indexes"] == 1
    dart = {t.name: t for t in listed.tools}
    assert dart[CB].input_schema == runtime.input_schema(runtime.catalog.tools[CB])


def test_a_search_before_the_deferred_build_builds_the_index_itself_once(built) -> None:
    runtime = ToyRuntime()
    deferred: list = []
    handlers = GatewayHandlers(runtime, ToolSet.everything("search", mode="search"), page_size=100,
                               telemetry=Telemetry(), deferred=deferred)
    assert built["indexes"] == 0 and len(deferred) == 1
    result = handlers._search({"query": "학급 학생 수"})
    assert result.structured_content["tools"][0]["name"] == "class_and_student_status"  # type: ignore[index]
    assert deferred[0]() is handlers.search_index()  # the deferred job finds it built
    assert built["indexes"] == 1
    eager = GatewayHandlers(runtime, ToolSet.everything("search", mode="search"), page_size=100,
                            telemetry=Telemetry())  # no deferred list (stdio, in-process): built at once
    assert built["indexes"] == 2 and eager._index is not None
