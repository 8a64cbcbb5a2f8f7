"""The gateway over stdin/stdout (``kopa serve --stdio``): one client per process, one session."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from .mcp_server import DEFAULT_PAGE_SIZE, RuntimeProtocol, build_mcp_server
from .telemetry import Telemetry
from .toolset import ToolSet
from .warm import warm_up


async def run_stdio(runtime: RuntimeProtocol, toolset: ToolSet, *, page_size: int = DEFAULT_PAGE_SIZE,
                    telemetry: Telemetry | None = None, warm: bool = True) -> None:
    """Serve ``toolset`` until stdin closes. Logs must go to stderr: stdout is the wire.

    ``warm``: do what the first calls would pay before reading the first message (``warm.warm_up``)."""
    server = build_mcp_server(runtime, toolset, page_size=page_size, telemetry=telemetry)
    if warm:
        warm_up(runtime)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
