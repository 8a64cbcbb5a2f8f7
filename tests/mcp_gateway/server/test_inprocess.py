"""The MCP server in-process (the official client against the ``Server`` object): profiles, paging, keys."""

from __future__ import annotations

import json
import logging

import pytest
from mcp import Client

from mcp_gateway.server import AUDIT_LOGGER, ToolSet, build_mcp_server
from tests.mcp_gateway.server.toy_runtime import (
    EPISODE_KEY,
    N_LONG_TAIL,
    REAL_KEY,
    ToyRuntime,
)

CB = "get_dart_convertible_bond_issuance_decision"


async def test_bench_profile_exposes_the_key_parameter_and_the_key_token_never_leaks(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    async with Client(build_mcp_server(ToyRuntime(profile="bench"), ToolSet.everything())) as client:
        cb = next(t for t in (await client.list_tools()).tools if t.name == CB)
        good = await client.call_tool(CB, {"KEY": EPISODE_KEY, "corp_code": "00126380"})
        bad = await client.call_tool(CB, {"KEY": "guessed", "corp_code": "00126380"})
    assert "KEY" in cb.input_schema["properties"] and "KEY" in cb.input_schema["required"]
    assert good.is_error is False
    assert bad.is_error and bad.structured_content["outcome"] == "auth_error"  # type: ignore[index]
    audit = [json.loads(r.getMessage()) for r in caplog.records if r.name == AUDIT_LOGGER]
    assert [a["outcome"] for a in audit] == ["semantic_success", "auth_error"]
    for text in (caplog.text, good.content[0].text, bad.content[0].text):  # type: ignore[union-attr]
        assert EPISODE_KEY not in text and REAL_KEY not in text


async def test_page_size_is_configurable_and_pages_do_not_overlap() -> None:
    runtime = ToyRuntime()
    async with Client(build_mcp_server(runtime, ToolSet.everything(), page_size=7)) as client:
        seen: list[str] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            assert len(page.tools) <= 7
            seen += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
    assert seen == list(runtime.catalog.tools) and len(seen) == 7 + N_LONG_TAIL


def test_a_toolset_naming_missing_tools_is_refused() -> None:
    with pytest.raises(ValueError, match="no_such_tool"):
        build_mcp_server(ToyRuntime(), ToolSet("task/x", ("read_note", "no_such_tool")))
