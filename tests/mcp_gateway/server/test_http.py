"""The gateway over streamable HTTP on a real loopback port, with the official MCP client."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_gateway.server import AUDIT_LOGGER
from tests.mcp_gateway.server.conftest import PAGE_SIZE, TOKEN, mcp_client
from tests.mcp_gateway.server.toy_runtime import N_LONG_TAIL, REAL_KEY, ToyRuntime

CB = "get_dart_convertible_bond_issuance_decision"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def list_all(client: Client) -> tuple[list[str], int]:
    """Every tool name across pages, and the number of pages."""
    names: list[str] = []
    cursor, pages = None, 0
    while True:
        page = await client.list_tools(cursor=cursor)
        names += [t.name for t in page.tools]
        pages += 1
        if page.next_cursor is None:
            return names, pages
        cursor = page.next_cursor


async def test_lists_every_tool_across_pages_with_schemas(gateway_origin: str, runtime: ToyRuntime) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        first = await client.list_tools()
        names, pages = await list_all(client)
    assert len(first.tools) == PAGE_SIZE
    assert names == list(runtime.catalog.tools) and len(names) == 7 + N_LONG_TAIL
    assert pages == -(-len(names) // PAGE_SIZE)
    cb = next(t for t in first.tools if t.name == CB)
    assert cb.description and "전환사채" in cb.description
    assert set(cb.input_schema["properties"]) == {"corp_code", "bgn_de", "pageNo", "numOfRows"}  # chat: no KEY
    assert cb.input_schema["required"] == ["corp_code"]
    assert cb.output_schema and set(cb.output_schema["properties"]["records"]["items"]["properties"]) == {
        "corp_name", "bd_fta"}
    assert cb.annotations and cb.annotations.read_only_hint is True and cb.annotations.open_world_hint is True
    note = next(t for t in first.tools if t.name == "write_note")
    assert note.annotations and note.annotations.read_only_hint is False


async def test_call_returns_structured_content_text_and_correlation_id(gateway_origin: str) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        result = await client.call_tool(CB, {"corp_code": "00126380", "numOfRows": 5})
    assert result.is_error is False
    assert result.structured_content == {"outcome": "semantic_success", "total_count": 1, "page_no": 1,
                                         "page_size": 5, "upstream_code": "000",
                                         "records": [{"corp_name": "한빛전자", "bd_fta": 5_000_000_000}]}
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    assert result.meta and len(result.meta["kopa/correlationId"]) == 32


async def test_tool_failures_are_visible_results_and_the_server_stays_up(gateway_origin: str,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        limited = await client.call_tool("get_tollbooth_traffic_volume", {})
        unknown = await client.call_tool("get_dart_convertible_bond_issuance", {"corp_code": "1"})
        crashed = await client.call_tool("class_and_student_status", {})
        after = await client.call_tool(CB, {"corp_code": "00126380"})
    assert limited.is_error and limited.structured_content == {
        "outcome": "rate_limit", "upstream_code": "429", "records": [],
        "message": "rate limited upstream after 3 attempts; retry later"}
    assert unknown.is_error and unknown.structured_content["outcome"] == "schema_mismatch"  # type: ignore[index]
    assert CB in unknown.structured_content["message"]  # type: ignore[index]
    assert crashed.is_error and crashed.structured_content["outcome"] == "uncategorized"  # type: ignore[index]
    assert REAL_KEY not in crashed.content[0].text  # type: ignore[union-attr]
    assert REAL_KEY not in caplog.text and "RuntimeError" in caplog.text
    assert after.is_error is False


async def test_invalid_cursor_is_a_protocol_error(gateway_origin: str) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        with pytest.raises(MCPError) as err:
            await client.list_tools(cursor="not-a-cursor")
    assert err.value.code == -32602


@pytest.mark.parametrize("path", ["/mcp", "/mcp/platform/dart", "/mcp/search"])
@pytest.mark.parametrize("auth", [None, "Bearer wrong-token", f"Basic {TOKEN}"])
def test_mcp_paths_need_a_configured_bearer_token(gateway_origin: str, path: str, auth: str | None) -> None:
    headers = MCP_HEADERS | ({"Authorization": auth} if auth else {})
    response = httpx.post(f"{gateway_origin}{path}", json=INIT, headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    ok = httpx.post(f"{gateway_origin}{path}", json=INIT, headers=MCP_HEADERS | {"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.headers["mcp-session-id"]


def test_a_session_answers_only_the_token_that_opened_it(gateway_origin: str) -> None:
    opened = httpx.post(f"{gateway_origin}/mcp", json=INIT, headers=MCP_HEADERS | {"Authorization": f"Bearer {TOKEN}"})
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    other = httpx.post(f"{gateway_origin}/mcp", json=listing, headers=MCP_HEADERS | {
        "Authorization": "Bearer other-token", "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
    assert other.status_code == 404


async def test_concurrent_sessions_never_share_workspace_state(gateway_origin: str, runtime: ToyRuntime) -> None:
    async def session(text: str) -> list[dict[str, str]]:
        async with mcp_client(f"{gateway_origin}/mcp") as client:
            await client.call_tool("write_note", {"key": "plan", "text": text})
            await asyncio.sleep(0.05)  # let the other session write in between
            read = await client.call_tool("read_note", {"key": "plan"})
            return read.structured_content["records"]  # type: ignore[index]

    a, b = await asyncio.gather(session("가 세션"), session("나 세션"))
    assert a == [{"text": "가 세션"}] and b == [{"text": "나 세션"}]
    sessions = {sid for _, sid in runtime.calls}
    assert len(sessions) == 2
    assert sorted(runtime.resets) == sorted(sessions)  # each client's DELETE dropped its state
    assert runtime.notes == {}


async def test_virtual_servers_list_and_call_only_their_set(gateway_origin: str, runtime: ToyRuntime) -> None:
    async with mcp_client(f"{gateway_origin}/mcp/platform/dart") as client:
        dart, _ = await list_all(client)
        outside = await client.call_tool("get_stock_price_trend", {})
    async with mcp_client(f"{gateway_origin}/mcp/task/cb") as client:
        task, _ = await list_all(client)
    async with mcp_client(f"{gateway_origin}/mcp/domain/finance") as client:
        finance, _ = await list_all(client)
    assert dart == [CB, "find_dart_corp_code"]
    assert outside.is_error and runtime.calls == []  # refused before the runtime
    assert task == ["find_dart_corp_code", CB]
    assert finance == [CB, "find_dart_corp_code", "get_stock_price_trend"]


async def test_search_mode_finds_tools_by_korean_query_and_calls_them(gateway_origin: str) -> None:
    async with mcp_client(f"{gateway_origin}/mcp/search") as client:
        listed, _ = await list_all(client)
        found = await client.call_tool("search_tools", {"query": "전환사채 발행 결정", "limit": 3})
        classes = await client.call_tool("search_tools", {"query": "학급 학생 수"})
        called = await client.call_tool("call_tool", {"name": CB, "arguments": {"corp_code": "00126380"}})
        missing = await client.call_tool("call_tool", {"name": "no_such_tool", "arguments": {}})
    assert listed == ["search_tools", "call_tool", "write_note", "read_note"]
    hits = found.structured_content["tools"]  # type: ignore[index]
    assert len(hits) <= 3 and hits[0]["name"] == CB and "corp_code" in hits[0]["inputSchema"]["properties"]
    assert "KEY" not in hits[0]["inputSchema"]["properties"]
    assert classes.structured_content["tools"][0]["name"] == "class_and_student_status"  # type: ignore[index]
    assert called.is_error is False and called.structured_content["records"][0]["corp_name"] == "한빛전자"  # type: ignore[index]
    assert missing.is_error


async def test_metrics_count_calls_errors_and_latency(gateway_origin: str) -> None:
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        await client.call_tool(CB, {"corp_code": "00126380"})
        await client.call_tool(CB, {"corp_code": "00126380"})
        await client.call_tool("get_tollbooth_traffic_volume", {})
    async with httpx.AsyncClient() as http:
        text = (await http.get(f"{gateway_origin}/metrics")).text
    assert 'kopa_tool_calls_total{outcome="semantic_success",platform="dart"} 2.0' in text
    assert 'kopa_tool_calls_total{outcome="rate_limit",platform="expressway"} 1.0' in text
    assert 'kopa_tool_errors_total{outcome="rate_limit",outcome_class="environmental"} 1.0' in text
    assert 'kopa_tool_call_latency_seconds_count{platform="dart"} 2.0' in text


def test_healthz(gateway_origin: str) -> None:
    body = httpx.get(f"{gateway_origin}/healthz").json()
    assert body["status"] == "ok" and body["tools"] == 7 + N_LONG_TAIL and body["profile"] == "chat"
    assert {"all", "search", "platform/dart", "domain/finance", "task/cb"} <= set(body["toolsets"])


async def test_audit_log_has_one_json_line_per_call(gateway_origin: str, runtime: ToyRuntime,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        ok = await client.call_tool(CB, {"corp_code": "00126380"})
        await client.call_tool("get_tollbooth_traffic_volume", {})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == AUDIT_LOGGER]
    assert [(line["tool"], line["outcome"], line["upstream_code"]) for line in lines] == [
        (CB, "semantic_success", "000"), ("get_tollbooth_traffic_volume", "rate_limit", "429")]
    assert lines[0]["correlation_id"] == ok.meta["kopa/correlationId"]  # type: ignore[index]
    assert lines[0]["session_id"] == runtime.calls[0][1] and lines[0]["latency_ms"] >= 0
    assert "00126380" not in caplog.text  # argument values never reach the log


async def test_http_clients_are_steered_to_the_session_era(gateway_origin: str) -> None:
    """2026-07-28 HTTP has no sessions; auto clients fall back to the handshake, pinned ones cannot call tools."""
    async with mcp_client(f"{gateway_origin}/mcp") as client:
        assert client.session.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
                Client(streamable_http_client(f"{gateway_origin}/mcp", http_client=http),
                       mode=MODERN_PROTOCOL_VERSIONS[-1]) as modern):
        with pytest.raises(MCPError, match="per-session"):
            await modern.call_tool("write_note", {"key": "k", "text": "t"})
