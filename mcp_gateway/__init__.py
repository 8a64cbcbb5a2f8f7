"""mcp_gateway: tool catalog, platform clients, ToolRuntime, per-session workspace state, MCP server."""
