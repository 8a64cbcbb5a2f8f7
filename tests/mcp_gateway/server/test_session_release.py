"""A session its client ends is freed: the runtime keeps nothing for it (the soak benchmark's premise)."""

from __future__ import annotations

from mcp_gateway.catalog import Catalog
from mcp_gateway.catalog.builtins import builtin_specs
from mcp_gateway.catalog.catalog import build_spec
from mcp_gateway.clients import ClientSet, PlatformURLs, SecretStore
from mcp_gateway.runtime.runtime import ToolRuntime
from mcp_gateway.server import ToolSet, create_gateway_app
from sandbox.loopback import LoopbackServer
from tests.mcp_gateway.server.conftest import mcp_client


async def test_closed_sessions_leave_no_state_behind() -> None:
    """Regression: a DELETE used to replace the session's state with an empty one, kept for an hour per session."""
    clients = ClientSet(PlatformURLs.sandbox("http://sandbox"), secrets=SecretStore({}))  # built-in tools only
    builtins = Catalog((build_spec(raw, "builtins"), "builtins") for raw in builtin_specs())  # the workspace tools
    runtime = ToolRuntime(builtins, clients, clients.ctx.secrets)
    app = create_gateway_app(runtime, tokens={"t"}, toolsets={"all": ToolSet("all", ("write_note", "read_note"))},
                             resources=[clients])
    with LoopbackServer(app, lifespan=True) as server:
        for n in range(3):
            async with mcp_client(f"{server.origin}/mcp", token="t") as client:
                await client.call_tool("write_note", {"key": "k", "text": f"session {n}"})
                assert len(runtime.sessions) == 1
            assert len(runtime.sessions) == 0
        async with mcp_client(f"{server.origin}/mcp", token="t") as client:  # a new session starts empty
            fresh = await client.call_tool("read_note", {"key": "k"})
    assert fresh.structured_content["outcome"] == "schema_mismatch"  # type: ignore[index]
