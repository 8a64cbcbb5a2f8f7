"""The task-set tools on hand-made tasks: the audit's findings, Table 6 statistics, drafts turned into tasks."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from bench.task import parse_task
from bench.taskset.audit import audit_tasks
from bench.taskset.build import to_task
from bench.taskset.draft import Draft, DraftError
from bench.taskset.stats import format_table, task_set_stats
from bench.taskset.values import number
from mcp_gateway.catalog import load_catalog
from mcp_gateway.gateway import open_gateway
from tests.conftest import TEST_DATA_DIR, sandbox_upstream


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def make_task(**changes):
    base = {
        "id": "t-1", "query": "서울 지하철 2호선 역은 모두 몇 개인가요?", "domain": "traffic", "platforms": ["seoul"],
        "system_state": {"actions": [{"name": "seoul_api_key", "tool": "get_seoul_api_key", "output_field": "api_key"}]},
        "available_tools": ["search_subway_stations", "evaluate_expression"],
        "golden_actions": [
            {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "LINE_NUM": "02호선"},
             "value_compare_args": ["LINE_NUM"]},
            {"step": 1, "tool": "evaluate_expression", "args": {"expression": "50 + 1"}}],
        "reward_basis": ["ACTION", "RESPONSE"], "response_type": "number", "accepted_answers": ["51"],
        "max_allowed_calls": 4, "bundle": "b@1",
    }
    base.update(changes)
    return parse_task(base)


def checks(findings, task_id):
    return sorted({f.check for f in findings if f.task_id == task_id})


def test_a_sound_task_has_no_findings(catalog):
    assert audit_tasks([make_task()], catalog) == []


def test_audit_flags_api_names_and_discovered_codes_in_the_query(catalog):
    named = make_task(id="named", query="search_subway_stations 도구로 LINE_NUM 02호선 역 수를 알려 주세요.")
    leaked = make_task(id="leaked", query="서울대입구역(코드 0228)과 같은 노선의 역은 몇 개인가요?", golden_actions=[
        {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "STATION_NM": "서울대입구"},
         "value_compare_args": ["STATION_NM"]},
        {"step": 1, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "STATION_CD": "0228"},
         "value_compare_args": ["STATION_CD"]}])
    given = make_task(id="given", query="역 코드 0228인 역과 같은 노선의 역은 몇 개인가요?", golden_actions=[
        {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "STATION_CD": "0228"},
         "value_compare_args": ["STATION_CD"]},
        {"step": 1, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "STATION_CD": "0228",
                                                              "LINE_NUM": "02호선"}, "value_compare_args": ["STATION_CD"]}])
    year_ok = make_task(id="year", query="2025년 기준 서울 지하철 2호선 역 수는?")
    findings = audit_tasks([named, leaked, given, year_ok], catalog)
    messages = [str(f) for f in findings]
    assert any("'search_subway_stations'" in m for m in messages) and any("'LINE_NUM'" in m for m in messages)
    assert any("'0228'" in m and "STATION_CD" in m for m in messages)
    assert checks(findings, "year") == [] and checks(findings, "given") == []  # the user gave the code


def test_audit_checks_the_reward_basis_against_state_writes(catalog):
    unchecked_write = make_task(id="w", query="2호선 첫 역을 목록에 넣어 주세요.", available_tools=["search_subway_stations", "add_to_watchlist"], golden_actions=[
        {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "LINE_NUM": "02호선"}},
        {"step": 1, "tool": "add_to_watchlist", "args": {"list_name": "역", "item": "시청"}}])
    vacuous = make_task(id="v", query="경부선 영업소 수를 메모해 주세요.", reward_basis=["ACTION", "ENVIRONMENT"], response_type=None, accepted_answers=[],
                        golden_state_hash="0" * 64)
    findings = audit_tasks([unchecked_write, vacuous], catalog)
    assert checks(findings, "w") == ["reward basis"] and checks(findings, "v") == ["reward basis"]
    assert all(f.severity == "error" for f in findings)


def test_audit_flags_unknown_tools_and_near_duplicates(catalog):
    unknown = make_task(id="u", query="국회의원 가운데 가장 나이가 많은 사람은?", available_tools=["search_subway_stationz"], golden_actions=[
        {"step": 0, "tool": "search_subway_stationz", "args": {}}])
    twin = make_task(id="t-2", query="서울 지하철 2호선 역은 모두 몇 개 인가요?")
    different = make_task(id="t-3", query="경부선 고속도로 영업소 가운데 이름이 가장 긴 곳은 어디인가요?")
    findings = audit_tasks([make_task(), twin, different, unknown], catalog)
    assert checks(findings, "u") == ["catalog"]
    assert checks(findings, "t-2") == ["near-duplicate"] and checks(findings, "t-3") == []


def test_statistics_follow_appendix_d():
    parallel = make_task(id="p", golden_actions=[
        {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "LINE_NUM": "02호선"}},
        {"step": 0, "tool": "search_subway_stations", "args": {"KEY": "{seoul_api_key}", "LINE_NUM": "03호선"}},
        {"step": 1, "tool": "evaluate_expression", "args": {"expression": "1+2"}}], max_allowed_calls=6)
    rows = task_set_stats([make_task(), parallel])
    row = rows["all"]
    assert (row.tasks, row.steps, row.calls, row.parallel, row.max_calls) == (2, 2.0, 2.5, 0.5, 3)
    assert row.headroom == pytest.approx((4 / 2 + 6 / 3) / 2)
    assert rows["traffic"] == row
    assert "3.32" in format_table(rows)  # the paper's overall steps beside ours


def test_number_reads_values_as_an_agent_would():
    assert number("1,690원") == 1690 and number(" -3.5 %") == -3.5 and number(7) == 7.0
    with pytest.raises(ValueError, match="no number"):
        number("없음")


def test_a_draft_becomes_a_task_with_keys_paging_and_state(catalog):
    async def draft() -> Draft:
        gateway = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="bench")
        try:
            d = Draft(task_id="trf-900", domain="traffic", runtime=gateway.runtime, session="d",
                      rng=random.Random(0), template="t")
            first = await d.call("search_subway_stations", {"LINE_NUM": "02호선"}, step=0, page=1, size=10)
            await d.call("search_subway_stations", {"LINE_NUM": "02호선"}, step=1, page=2, size=10)
            await d.call("add_to_watchlist", {"list_name": "역", "item": first.records[0]["STATION_NM"]}, step=2)
            d.ask("서울 지하철 2호선 첫 번째 역을 '역' 목록에 넣고 이름을 알려 주세요.")
            d.answer_string(first.records[0]["STATION_NM"])
            with pytest.raises(DraftError, match="failed"):
                await d.call("search_subway_stations", {"LINE_NUM": 2}, step=3)
            d.calls.pop()
            return d
        finally:
            await gateway.aclose()

    d = asyncio.run(draft())
    task = to_task(d, "b@1", catalog)
    assert task["golden_actions"][0]["args"]["KEY"] == "{seoul_api_key}"
    assert task["system_state"]["actions"] == [{"name": "seoul_api_key", "tool": "get_seoul_api_key",
                                                "output_field": "api_key"}]
    assert task["pages"] is True and {"paging", "chain"} <= set(task["tags"])
    assert task["reward_basis"] == ["ACTION", "RESPONSE", "ENVIRONMENT"] and len(task["golden_state_hash"]) == 64
    assert len(task["available_tools"]) >= 7 and task["available_tools"][:2] == ["search_subway_stations",
                                                                                 "add_to_watchlist"]
    assert task["max_allowed_calls"] == round(3 * 2.21)
    json.dumps(task, ensure_ascii=False)


def test_a_failed_attempt_is_rolled_back_calls_and_workspace_alike():
    async def draft() -> Draft:
        gateway = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="bench")
        try:
            d = Draft(task_id="trf-901", domain="traffic", runtime=gateway.runtime, session="r",
                      rng=random.Random(0), template="t")

            async def body(attempt: int) -> None:
                await d.call("add_to_watchlist", {"list_name": "역", "item": f"시도 {attempt}"}, step=0)
                d.tags.append(f"attempt-{attempt}")
                if attempt < 2:
                    raise DraftError(f"attempt {attempt} tied")

            await d.retry(body)
            with pytest.raises(DraftError, match=r"no clean instance in 1 attempts: \['never'\]"):
                async def never(attempt: int) -> None:
                    raise DraftError("never")
                await d.retry(never, tries=1)
            return d
        finally:
            await gateway.aclose()

    d = asyncio.run(draft())
    assert [c.args["item"] for c in d.calls] == ["시도 2"] and d.tags == ["attempt-2"]
    assert d.runtime.session("r").workspace.watchlists == {"역": {"시도 2": ""}}
