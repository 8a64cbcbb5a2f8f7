"""Input checks the MCP server makes itself: the search-mode meta-tools' arguments, and the 413 on a large body."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client

from mcp_gateway.limits import InputLimits
from mcp_gateway.server import ToolSet, build_mcp_server
from tests.mcp_gateway.server.conftest import TOKEN, mcp_client
from tests.mcp_gateway.server.toy_runtime import ToyRuntime

REQUEST_LIMIT = 4_096
SEARCH = ToolSet.everything("search", mode="search")


@pytest.fixture
def runtime() -> ToyRuntime:
    """The conftest's gateway_origin serves this runtime: a small request-body limit."""
    return ToyRuntime(limits=InputLimits(max_request_bytes=REQUEST_LIMIT, max_string_chars=50))


@pytest.mark.parametrize(("tool", "args", "outcome", "message"), [
    ("search_tools", {"query": 5}, "schema_mismatch", "search_tools: parameter 'query' expects string, got integer 5"),
    ("search_tools", {}, "missing_field",
     "search_tools: missing required parameter 'query' (string: 찾을 기능을 설명하는 검색어)"),
    ("search_tools", {"query": "  "}, "missing_field",
     "search_tools: missing required parameter 'query' (string: 찾을 기능을 설명하는 검색어)"),
    ("search_tools", {"query": "학교", "limit": True}, "schema_mismatch",
     "search_tools: parameter 'limit' expects integer, got boolean True"),
    ("search_tools", {"query": "학교", "limit": 51}, "schema_mismatch",
     "search_tools: parameter 'limit' must be an integer from 1 to 50; got integer 51"),
    ("search_tools", {"query": "학교", "lang": "ko"}, "schema_mismatch",
     "search_tools: unknown parameter(s) 'lang'; this tool takes: query, limit"),
    ("search_tools", {"query": "학" * 51}, "schema_mismatch",
     "search_tools: parameter 'query' is 51 characters long; the limit is 50 "
     "(setting KOPA_GATEWAY__LIMITS__MAX_STRING_CHARS). Send a shorter value."),
    ("call_tool", {"name": ["read_note"]}, "schema_mismatch",
     "call_tool: parameter 'name' expects string, got array of 1 items"),
    ("call_tool", {"arguments": {}}, "missing_field",
     "call_tool: missing required parameter 'name' (string: 호출할 도구 이름)"),
    ("call_tool", {"name": "read_note", "arguments": "key=a"}, "schema_mismatch",
     "call_tool: parameter 'arguments' expects object, got string 'key=a'"),
])
async def test_search_mode_meta_tools_name_the_parameter_and_tell_wrong_type_from_missing(
        runtime: ToyRuntime, tool: str, args: dict, outcome: str, message: str) -> None:
    async with Client(build_mcp_server(runtime, SEARCH)) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error and result.structured_content == {"outcome": outcome, "records": [], "message": message}
    assert runtime.calls == []


async def test_call_tool_passes_a_long_inner_argument_to_the_runtime_limits(runtime: ToyRuntime) -> None:
    """The server does not check ``call_tool``'s inner arguments itself: the runtime's limits cover them."""
    async with Client(build_mcp_server(runtime, SEARCH)) as client:
        result = await client.call_tool("call_tool", {"name": "read_note", "arguments": {"key": "k" * 500}})
    assert runtime.calls == [("read_note", runtime.calls[0][1])] and not result.is_error


async def test_an_unknown_tool_name_too_long_for_any_tool_is_refused_without_echoing_it(runtime: ToyRuntime) -> None:
    async with Client(build_mcp_server(runtime, ToolSet.everything())) as client:
        result = await client.call_tool("n" * 10_000, {})
    assert result.structured_content == {"outcome": "schema_mismatch", "records": [], "message": (
        "unknown tool: the name is 10,000 characters long; tool names have at most 128 characters")}


def test_a_declared_body_over_the_limit_gets_413_before_auth(gateway_origin: str) -> None:
    response = httpx.post(f"{gateway_origin}/mcp", content=b"x" * (REQUEST_LIMIT + 1),
                          headers={"Content-Type": "application/json"})  # no token: the size is refused first
    assert response.status_code == 413
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": (
        "request body is 4,097 bytes; the limit is 4,096 bytes (setting KOPA_GATEWAY__LIMITS__MAX_REQUEST_BYTES)")}}


def test_a_streamed_body_without_a_length_is_counted_and_refused_at_the_limit(gateway_origin: str) -> None:
    sent = 0

    def chunks():  # chunked transfer encoding: no Content-Length to trust or refuse up front
        nonlocal sent
        for _ in range(64):
            sent += 1024
            yield b" " * 1024

    response = httpx.post(f"{gateway_origin}/mcp", content=chunks(),
                          headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 413
    assert response.json()["error"]["message"] == (
        "request body is more than 4,096 bytes; the limit is 4,096 bytes "
        "(setting KOPA_GATEWAY__LIMITS__MAX_REQUEST_BYTES)")


async def test_bodies_under_the_limit_pass_through_to_a_working_session(gateway_origin: str,
                                                                        runtime: ToyRuntime) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        written = await client.call_tool("write_note", {"key": "k", "text": "가" * 40})
        read = await client.call_tool("read_note", {"key": "k"})
    assert not written.is_error and read.structured_content["records"] == [{"text": "가" * 40}]
