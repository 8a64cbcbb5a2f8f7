"""`kopa tools stats` and `kopa serve` as a user runs them."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.appliance.test_cli import kopa, running_kopa


def test_tools_stats_reports_paper_scale_counts():
    result = kopa("tools", "stats", "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["total"] >= 2_318
    assert set(stats["by_domain"]) >= {"traffic", "finance", "education", "law", "politics", "district"}
    assert len([p for p in stats["by_platform"] if p != "internal"]) == 10


@pytest.mark.parametrize(("args", "message"), [
    (["serve", "--upstream", "moon"], "unknown upstream 'moon'"),
    (["serve", "--profile", "admin"], "choose chat or bench"),
    (["serve", "--bundle", "default@abc"], "it goes with --mode record|replay|replay-or-record"),
    (["serve", "--upstream", "replay"], "recorder mode replay needs --bundle NAME[@VERSION]"),  # not read as markup
    (["serve", "--upstream", "replay", "--bundle", "nothing-here"], "no bundle named 'nothing-here'"),
])
def test_serve_refuses_bad_options_with_a_reason(args, message):
    result = kopa(*args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


@asynccontextmanager
async def bearer_client(url: str, token: str):
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        yield client


async def test_serve_embedded_default_answers_mcp_with_the_configured_token(world, tmp_path):
    task_set = {"task/cb": ["find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "evaluate_expression"]}
    audit = tmp_path / "audit.jsonl"
    env = {"KOPA_GATEWAY__TOKENS": '["tok-123"]', "KOPA_GATEWAY__TOOLSETS": json.dumps(task_set),
           "KOPA_GATEWAY__AUDIT_FILE": str(audit)}
    with running_kopa("serve", log=tmp_path / "serve.log", env=env) as run:
        assert run["health"]["status"] == "ok"
        assert httpx.post(run["origin"] + "/mcp", json={}).status_code == 401
        async with bearer_client(run["origin"] + "/mcp", "tok-123") as client:
            result = await client.call_tool("evaluate_expression", {"expression": "100 * (1680 - 532) / 532"})
            assert result.structured_content["records"][0]["value"] == "215.789473684211"
            school = await client.call_tool("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"})
            assert school.structured_content["outcome"] == "semantic_success"
            assert school.structured_content["total_count"] == world.count("edu_school", '"ATPT_OFCDC_SC_CODE" = ?',
                                                                            ["T10"])
        async with bearer_client(run["origin"] + "/mcp/task/cb", "tok-123") as client:
            assert [t.name for t in (await client.list_tools()).tools] == task_set["task/cb"]
        lines = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
        assert [(a["tool"], a["outcome"]) for a in lines] == [("evaluate_expression", "semantic_success"),
                                                                ("search_school_info", "semantic_success")]
        assert "tok-123" not in audit.read_text(encoding="utf-8")  # the console reads this file; no secret in it


def test_serve_refuses_a_task_set_naming_an_unknown_tool(tmp_path):
    result = kopa("serve", env={"KOPA_GATEWAY__TOOLSETS": '{"task/x": ["no_such_tool"]}', "KOPA_GATEWAY__PORT": "1"})
    assert result.returncode == 2 and "no_such_tool" in result.stderr, result.stderr
