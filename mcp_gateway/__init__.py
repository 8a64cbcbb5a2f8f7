"""mcp_gateway: tool catalog, platform clients, ToolRuntime, per-session workspace state, MCP server."""

__all__: list[str] = []  # a namespace: import the modules themselves
