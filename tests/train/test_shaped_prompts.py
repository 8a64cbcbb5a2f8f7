"""One renderer for training rows and evaluated prompts: under the same episode limits (short tool descriptions,
small tool results) EDGE's SFT row of an item shows the model exactly the tools and tool results that a rollout of
the same item is shown by the agent step.

Real parts: EDGE's export over shipped bench tasks, strict replay of the checked-in bundle, ``train.episode``.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bench.agents.step import GENERIC_PARAMS, approx_tokens, bare_generic, short_text, short_tool, shown_tools
from bench.limits import EpisodeLimits
from edge.dataset.export import export_sft, replay_items
from train.episode import run_rollout
from train.policies import GoldenPolicy

from .conftest import as_item, bench_tasks, replay_gateway

SHORT = EpisodeLimits(max_description_chars=40, max_tool_tokens=96, bare_generic_params=True)
IDS = ("fin-001", "trf-001")  # parallel steps with large records; a chain


def test_short_text_keeps_the_first_sentence_within_the_limit():
    text = "KRX 상장종목 기본정보를 기준일자별로 조회합니다. 종목명으로 종목코드를 찾을 때 쓰세요.\n반환 레코드 필드: basDt"
    assert short_text(text, 200) == "KRX 상장종목 기본정보를 기준일자별로 조회합니다."
    cut = short_text(text, 20)
    assert len(cut) <= 20 and cut.endswith("…") and text.startswith(cut[:-1])
    assert short_text(text, 0) == ""


def test_short_tools_keep_names_types_enums_and_required():
    tool = {"type": "function", "function": {"name": "f", "description": "첫 문장입니다. 둘째 문장.", "parameters": {
        "type": "object", "required": ["a"], "properties": {
            "a": {"type": "string", "description": "에이 값. 더 긴 설명", "title": "A", "enum": ["x", "y"]},
            "description": {"type": "integer", "description": "a parameter named description"}}}}}
    short = short_tool(tool, 100)["function"]
    assert short["description"] == "첫 문장입니다."
    assert short["parameters"] == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "description": "에이 값.", "enum": ["x", "y"]},
        "description": {"type": "integer", "description": "a parameter named description"}}}
    dropped = short_tool(tool, 0)["function"]
    assert "description" not in dropped and "description" not in dropped["parameters"]["properties"]["a"]
    assert shown_tools([tool], EpisodeLimits()) == [tool]  # no limit: untouched


def test_bare_generic_parameters_keep_their_names_types_and_bounds_only():
    tool = {"type": "function", "function": {"name": "f", "description": "조회합니다.", "parameters": {
        "type": "object", "required": ["KEY"], "properties": {
            "KEY": {"type": "string", "description": "인증키. get_x_api_key 도구가 돌려준 키 토큰을 그대로 넣으세요."},
            "ROUTE": {"type": "string", "description": "노선명(예: 경부선)"},
            "pageNo": {"type": "integer", "description": "가져올 페이지 번호(1부터).", "default": 1},
            "numOfRows": {"type": "integer", "description": "한 페이지의 레코드 수.", "default": 10, "maximum": 1000}}}}}
    bare = bare_generic(tool)["function"]["parameters"]
    assert bare["properties"] == {"KEY": {"type": "string"},
                                  "ROUTE": {"type": "string", "description": "노선명(예: 경부선)"},
                                  "pageNo": {"type": "integer"}, "numOfRows": {"type": "integer", "maximum": 1000}}
    assert bare["required"] == ["KEY"] and tool["function"]["parameters"]["properties"]["KEY"]["description"]  # a copy
    shown = shown_tools([tool], EpisodeLimits(max_description_chars=12, bare_generic_params=True))[0]["function"]
    assert shown["parameters"]["properties"]["ROUTE"]["description"] == "노선명(예: 경부선)"  # within 12: kept
    assert all(set(shown["parameters"]["properties"][name]) <= {"type", "maximum"} for name in GENERIC_PARAMS)
    described = shown_tools([tool], EpisodeLimits(max_description_chars=12))[0]["function"]["parameters"]
    assert described["properties"]["pageNo"]["description"] and described["properties"]["pageNo"]["default"] == 1


@pytest.fixture(scope="module")
def shaped(tmp_path_factory):
    """(SFT rows exported under SHORT, the golden rollouts played under SHORT), by task id."""
    folder = tmp_path_factory.mktemp("shaped")
    tasks = bench_tasks()
    items = [as_item(tasks[i]) for i in IDS]

    async def play():
        gateway = replay_gateway(folder / "home", items[0].task.bundle)
        try:
            replays = await replay_items(items, gateway, limits=SHORT)
            rollouts = {}
            for item in items:
                seen_tools = []
                golden = GoldenPolicy(item.task)

                async def policy(messages, tools, golden=golden, seen_tools=seen_tools):
                    seen_tools.append(list(tools))
                    return await golden(messages, tools)

                rollout = await run_rollout(item.task, policy, gateway, limits=SHORT)
                rollouts[item.task.id] = (rollout, seen_tools[0])
            return replays, rollouts
        finally:
            await gateway.aclose()

    replays, rollouts = asyncio.run(play())
    export_sft(items, folder / "sft.jsonl", replays=replays)
    rows = {r["id"]: r for r in map(json.loads, (folder / "sft.jsonl").read_text(encoding="utf-8").splitlines())}
    return rows, rollouts


def test_an_exported_row_shows_the_tools_and_results_a_rollout_is_shown(shaped):
    rows, rollouts = shaped
    for task_id in IDS:
        row, (rollout, tools) = rows[task_id], rollouts[task_id]
        assert rollout.outcome.passed
        assert row["tools"] == tools  # same order, same shortened descriptions
        assert all(len(t["function"].get("description", "")) <= 40 for t in tools)
        row_results = [m["content"] for m in row["messages"] if m["role"] == "tool"]
        played_results = [m["content"] for m in rollout.messages if m["role"] == "tool"]
        assert row_results == played_results
        assert all(approx_tokens(text) <= SHORT.max_tool_tokens for text in row_results)
    assert any("records_omitted" in text for r in rows.values() for m in r["messages"] if m["role"] == "tool"
               for text in [m["content"]])  # the cap did cut something: the check is not vacuous
