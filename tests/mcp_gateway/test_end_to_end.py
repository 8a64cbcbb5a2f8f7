"""The whole gateway as users reach it: `kopa serve --stdio`, and faults seen through MCP.

Real parts only: the committed catalog, the platform clients, ToolRuntime, the MCP server,
the official `mcp` client, and the sandbox upstream (with injected faults where a test says).
"""

from __future__ import annotations

import logging
import os
import sys
from urllib.parse import quote, quote_plus

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_gateway.catalog import load_catalog
from mcp_gateway.clients import ClientSet, Limits, PlatformURLs, SecretStore
from mcp_gateway.runtime.runtime import ToolRuntime
from mcp_gateway.server import ToolSet, build_mcp_server
from sandbox import FaultProfile, FaultRates, create_sandbox_app, default_keys
from tests.conftest import REPO, TEST_DATA_DIR, TEST_SCALE

# One call per platform that needs no entity code: the sandbox answers each with records.
PER_PLATFORM = {
    "ex": ("list_tollbooths", {}), "seoul": ("search_subway_stations", {}), "dart": ("find_dart_corp_code", {}),
    "krx": ("get_stock_price_trend", {"numOfRows": 5}), "kdic": ("list_deposit_insured_institutions", {}),
    "edu": ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}), "hrdk": ("get_national_qualification_exam_schedule", {}),
    "law": ("search_laws", {"query": "민법"}), "assembly": ("get_national_assembly_members", {}),
    "gg": ("gg_genrestrt", {"SIGUN_CD": "41110"}),
}


def key_forms() -> set[str]:
    return {form for key in default_keys().values() for form in (key, quote(key, safe=""), quote_plus(key))}


def assert_no_key(text: str) -> None:
    leaked = [k for k in key_forms() if k in text]
    assert not leaked, f"a platform key leaked: {leaked[0][:6]}…"


async def test_kopa_serve_stdio_lists_every_tool_and_calls_every_platform(world):
    catalog = load_catalog()
    assert PER_PLATFORM["gg"][0] in catalog
    params = StdioServerParameters(command=sys.executable, args=["-m", "appliance", "serve", "--stdio"], cwd=REPO,
                                   env={**os.environ, "KOPA_HOME": str(TEST_DATA_DIR),
                                        "KOPA_SANDBOX__SCALE": str(TEST_SCALE)})
    async with Client(params) as client:
        names, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
        assert sorted(names) == sorted(catalog.names()) and len(names) >= 2_318
        for platform, (tool, args) in PER_PLATFORM.items():
            result = await client.call_tool(tool, args)
            assert not result.is_error, (platform, result.structured_content)
            assert result.structured_content["records"], platform
            assert result.structured_content["total_count"] >= len(result.structured_content["records"])
            assert_no_key(result.content[0].text)


def gateway_server(world, keys, faults: FaultProfile | None = None, secrets: SecretStore | None = None):
    app = create_sandbox_app(world, keys, faults)
    clients = ClientSet(PlatformURLs.sandbox("http://sandbox"), transport=httpx.ASGITransport(app),
                        secrets=secrets or SecretStore(default_keys()),
                        limits=Limits(max_attempts=2, base_delay_s=0.001, timeout_s=0.5, rate_per_s=1e6, burst=10**6))
    runtime = ToolRuntime(load_catalog(), clients, secrets or SecretStore(default_keys()), "chat")
    return build_mcp_server(runtime, ToolSet.everything()), clients


async def call_then_recover(server, tool: str, args: dict) -> dict:
    """The failing call's structured result, after checking that the next call still works."""
    async with Client(server) as client:
        failed = await client.call_tool(tool, args)
        assert failed.is_error
        assert_no_key(failed.content[0].text)
        fine = await client.call_tool("evaluate_expression", {"expression": "1+1"})
        assert not fine.is_error and fine.structured_content["records"][0]["value"] == "2"
        return failed.structured_content


@pytest.mark.parametrize(("tool", "args", "outcome", "says"), [
    ("search_school_infos", {}, "schema_mismatch", "search_school_info"),
    ("search_school_info", {"numOfRows": "ten"}, "schema_mismatch", "expects integer"),
    ("get_dart_company_overview", {}, "missing_field", "corp_code"),
    ("search_school_info", {"KEY": "x"}, "schema_mismatch", "unknown parameter(s) 'KEY'"),
])
async def test_bad_calls_are_clear_tool_errors(world, keys, tool, args, outcome, says):
    server, clients = gateway_server(world, keys)
    try:
        result = await call_then_recover(server, tool, args)
    finally:
        await clients.aclose()
    assert result["outcome"] == outcome and says in result["message"]


async def test_upstream_auth_error_is_a_tool_error_without_the_key(world, keys):
    wrong = SecretStore({**default_keys(), "edu": "0" * 32})
    server, clients = gateway_server(world, keys, secrets=wrong)
    try:
        result = await call_then_recover(server, "search_school_info", {})
    finally:
        await clients.aclose()
    assert result["outcome"] == "auth_error" and result["upstream_code"] == "ERROR-290"


@pytest.mark.parametrize(("kind", "outcome"), [
    ("rate_limit", "rate_limit"), ("hang", "timeout"), ("malformed", "server_error"),
    ("server_error", "server_error"), ("unavailable", "endpoint_unavailable"),
])
async def test_upstream_faults_are_retried_then_surfaced(world, keys, kind, outcome, caplog):
    caplog.set_level(logging.DEBUG)
    faults = FaultProfile(hang_seconds=2, platforms={"edu": FaultRates(**{kind: 1.0})})
    server, clients = gateway_server(world, keys, faults)
    try:
        result = await call_then_recover(server, "search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"})
    finally:
        await clients.aclose()
    assert result["outcome"] == outcome, result
    assert_no_key(caplog.text)
