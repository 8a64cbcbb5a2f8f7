"""The gateway over stdio: a subprocess driven by the official client's stdio transport."""

from __future__ import annotations

import sys

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import REPO
from tests.mcp_gateway.server.toy_runtime import N_LONG_TAIL

CB = "get_dart_convertible_bond_issuance_decision"


def gateway_process(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.mcp_gateway.server.stdio_entry", *args],
                                 cwd=REPO)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_lists_every_tool_and_calls_tools(mode: str) -> None:
    async with Client(gateway_process(), mode=mode) as client:
        names: list[str] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
        result = await client.call_tool(CB, {"corp_code": "00126380"})
        await client.call_tool("write_note", {"key": "k", "text": "메모"})
        note = await client.call_tool("read_note", {"key": "k"})
        limited = await client.call_tool("get_tollbooth_traffic_volume", {})
    assert len(names) == 7 + N_LONG_TAIL and CB in names
    assert result.is_error is False and result.structured_content["records"][0]["corp_name"] == "한빛전자"  # type: ignore[index]
    assert note.structured_content["records"] == [{"text": "메모"}]  # type: ignore[index]
    assert limited.is_error and limited.structured_content["outcome"] == "rate_limit"  # type: ignore[index]


async def test_stdio_search_mode() -> None:
    async with Client(gateway_process("search")) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        found = await client.call_tool("search_tools", {"query": "전환사채 발행 결정"})
    assert listed == ["search_tools", "call_tool", "write_note"]
    assert found.structured_content["tools"][0]["name"] == CB  # type: ignore[index]
