"""``python -m tests.mcp_gateway.server.stdio_entry [search]``: the gateway over stdio on the toy runtime."""

from __future__ import annotations

import sys

import anyio

from mcp_gateway.server import ToolSet, run_stdio
from tests.mcp_gateway.server.toy_runtime import ToyRuntime

if __name__ == "__main__":
    toolset = ToolSet.everything(mode="search" if sys.argv[1:] == ["search"] else "full", pinned=["write_note"])
    anyio.run(run_stdio, ToyRuntime(), toolset)
