"""Gateway cost per tool call, beside a trivial MCP tool measured in the same run.

    python benchmarks/gateway_throughput.py [--calls 500] [--scale 1.0]

Five figures, each calls/s with p50/p99 latency, sequential calls:
  0. the upstream alone: the same sandbox request the platform client sends, straight to the app
  1. ToolRuntime in-process (sandbox upstream through ASGITransport)
  2. a trivial echo tool of the SDK's MCPServer, in-memory client
  3. the gateway over streamable HTTP with the official MCP client (`kopa serve`, its own process)
  4. the trivial echo tool over streamable HTTP (its own process, the same way)
  5. the gateway's built-in evaluate_expression over HTTP: its fixed cost, no upstream, tiny result
  6. the trivial echo tool sending back a text as large as the gateway's result (payload cost alone)
  7. a trivial typed tool over HTTP: no work, it returns a constant copy of the gateway's result under the
     gateway tool's own outputSchema (what any MCP server pays to deliver that typed result; the official
     client re-validates structured content against the outputSchema on every call, ~1 ms for 250 fields)
The gateway's own cost per call is its time minus the upstream's (0); the goal compares that with a
trivial tool's time on the same path: <= 2x. It is printed against both the bare echo (7 bytes of text)
and the typed tool (the same result shape), with the raw ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
import uvicorn
from starlette.responses import PlainTextResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager  # noqa: E402
from server_process import server_process  # noqa: E402  (benchmarks/ is on sys.path)
from starlette.applications import Starlette  # noqa: E402

from mcp_gateway.gateway import open_gateway  # noqa: E402
from sandbox import InProcessSandbox  # noqa: E402

TOOL, ARGS = "search_school_info", {"ATPT_OFCDC_SC_CODE": "T10", "numOfRows": 10}
TOKEN = "bench-token"


async def measure(call: Callable[[], Awaitable[object]], n: int) -> tuple[float, float, float]:
    for _ in range(min(20, n)):
        await call()  # warm-up
    times = []
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        await call()
        times.append((time.perf_counter() - t) * 1000)
    total = time.perf_counter() - started
    times.sort()
    return n / total, statistics.median(times), times[int(0.99 * (len(times) - 1))]


def echo_server() -> MCPServer:
    server = MCPServer("echo", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


def serve_echo(port: int) -> None:
    """The trivial tool's server process (``--serve-echo --port N``)."""
    app = echo_server().streamable_http_app()
    app.router.routes.append(Route("/healthz", lambda request: PlainTextResponse("ok")))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def typed_echo_server(tool: types.Tool, result: dict) -> Server:
    """One tool with ``tool``'s schemas that does nothing but return ``result`` (JSON text + structured)."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx, params) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=result)

    return Server("typed-echo", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_typed_echo(port: int, fixture: Path) -> None:
    """The typed trivial tool's process, served like the gateway (JSON responses, ``--serve-typed FILE``)."""
    data = json.loads(fixture.read_text(encoding="utf-8"))
    manager = StreamableHTTPSessionManager(app=typed_echo_server(types.Tool.model_validate(data["tool"]),
                                                                 data["result"]), json_response=True)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager)), Route("/healthz", lambda r: PlainTextResponse("ok"))],
                    lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def main(args: argparse.Namespace) -> None:
    home = Path(args.home).expanduser()
    gateway = open_gateway(upstream="sandbox", sandbox=InProcessSandbox(home, scale=args.scale), home=home)
    results: dict[str, tuple[float, float, float]] = {}
    scratch = tempfile.TemporaryDirectory()  # the typed tool's fixture: the gateway's own tool and result
    env = {**os.environ, "KOPA_HOME": str(home), "KOPA_SANDBOX__SCALE": str(args.scale),
           "KOPA_GATEWAY__TOKENS": json.dumps([TOKEN])}
    try:
        spec = gateway.catalog.get(TOOL)
        url = gateway.clients.ctx.urls.url(spec.endpoint)
        query = {"KEY": gateway.runtime.secrets.key("edu"), "Type": "json", "pIndex": "1", "pSize": "10",
                 "ATPT_OFCDC_SC_CODE": ARGS["ATPT_OFCDC_SC_CODE"]}
        upstream = gateway.clients.ctx.http  # the very client (and transport) the platform clients use
        results["upstream alone (sandbox request)"] = await measure(lambda: upstream.get(url, params=query), args.calls)
        results["gateway in-process (ToolRuntime)"] = await measure(
            lambda: gateway.runtime.call(TOOL, dict(ARGS), "bench"), args.calls)
        sample = await gateway.runtime.call(TOOL, dict(ARGS), "bench")
        same_bytes = json.dumps(sample.structured(), ensure_ascii=False)  # the gateway's result, as plain text
        echo = echo_server()
        async with Client(echo) as client:
            results["trivial echo in-memory"] = await measure(lambda: client.call_tool("echo", {"text": "x"}), args.calls)
        with server_process([sys.executable, "-m", "appliance", "serve"], env) as origin:
            async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
                        Client(streamable_http_client(origin + "/mcp", http_client=http)) as client):
                results["gateway over streamable HTTP"] = await measure(
                    lambda: client.call_tool(TOOL, dict(ARGS)), args.calls)
                results["gateway built-in tool over HTTP"] = await measure(
                    lambda: client.call_tool("evaluate_expression", {"expression": "1+1"}), args.calls)
                listed = {t.name: t for t in (await client.list_tools()).tools}  # the tool as the gateway lists it
        fixture = Path(scratch.name) / "typed-echo.json"
        fixture.write_text(json.dumps({"tool": listed[TOOL].model_dump(mode="json", by_alias=True, exclude_none=True),
                                       "result": sample.structured()}, ensure_ascii=False), encoding="utf-8")
        with server_process([sys.executable, __file__, "--serve-typed", str(fixture)], env) as origin:
            async with Client(origin + "/mcp") as client:
                await client.list_tools()  # the client validates structured content only for tools it has listed
                results["trivial typed tool over HTTP"] = await measure(
                    lambda: client.call_tool(TOOL, dict(ARGS)), args.calls)
        with server_process([sys.executable, __file__, "--serve-echo"], env) as origin:
            async with Client(origin + "/mcp") as client:
                results["trivial echo over streamable HTTP"] = await measure(
                    lambda: client.call_tool("echo", {"text": "x"}), args.calls)
                results["trivial echo of the same bytes, HTTP"] = await measure(
                    lambda: client.call_tool("echo", {"text": same_bytes}), args.calls)
    finally:
        await gateway.aclose()
        scratch.cleanup()
    print(f"\ngateway cost per call ({args.calls} sequential calls each; tool {TOOL})")
    print(f"{'path':<36} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, (rate, p50, p99) in results.items():
        print(f"{name:<36} {rate:>9.0f} {p50:>8.2f} {p99:>8.2f}")
    upstream_ms = 1000 / results["upstream alone (sandbox request)"][0]
    for label, gw, trivial in (("in-process", "gateway in-process (ToolRuntime)", "trivial echo in-memory"),
                               ("streamable HTTP", "gateway over streamable HTTP", "trivial echo over streamable HTTP"),
                               ("streamable HTTP, same typed result", "gateway over streamable HTTP",
                                "trivial typed tool over HTTP")):
        gw_ms, trivial_ms = 1000 / results[gw][0], 1000 / results[trivial][0]
        print(f"{label}: gateway {gw_ms:.2f} ms/call, of which upstream {upstream_ms:.2f} ms; gateway's own cost "
              f"{gw_ms - upstream_ms:.2f} ms = {(gw_ms - upstream_ms) / trivial_ms:.2f}x the trivial tool's "
              f"{trivial_ms:.2f} ms (goal <= 2x; raw ratio {gw_ms / trivial_ms:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--home", default=os.environ.get("KOPA_HOME", "~/.kopa"))
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-typed", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_typed:
        serve_typed_echo(options.port, options.serve_typed)
    elif options.serve_echo:
        serve_echo(options.port)
    else:
        asyncio.run(main(options))
