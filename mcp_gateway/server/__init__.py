"""The MCP server of the gateway: tool sets, search mode, streamable HTTP with auth and metrics, stdio."""

from .http_app import StaticTokenVerifier, create_gateway_app
from .mcp_server import RuntimeProtocol, build_mcp_server, mcp_tool
from .search import NgramIndex
from .stdio import run_stdio
from .telemetry import AUDIT_LOGGER, Telemetry, attach_audit_file, detach_audit_file
from .toolset import ToolSet, default_toolsets

__all__ = ["AUDIT_LOGGER", "NgramIndex", "RuntimeProtocol", "StaticTokenVerifier", "Telemetry", "ToolSet", "attach_audit_file", "detach_audit_file",
           "build_mcp_server", "create_gateway_app", "default_toolsets", "mcp_tool", "run_stdio"]
