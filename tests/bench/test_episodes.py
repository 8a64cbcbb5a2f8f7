"""Episodes end to end: the oracle and first-page baselines, a misbehaving agent, replay determinism.

Real parts throughout: the committed catalog, the gateway in the bench profile, the sandbox world
recorded into a cassette bundle (tests/bench/conftest.py) and replayed strictly, and the three scorers.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bench.agents import EpisodeContext, FirstPageAgent, OracleAgent, make_agent, resolve_placeholders
from bench.episode import EpisodeOutcome, episode_key_token, run_episode
from bench.prompt import RESPONSE_FORMATS, build_system_prompt
from bench.task import ResponseType, parse_task
from mcp_gateway.gateway import open_gateway
from recorder.redaction import secret_forms
from sandbox import default_keys
from tests.bench.conftest import BUNDLE, replay_gateway
from tests.conftest import TEST_DATA_DIR

OK = {"semantic_success", "generic_success"}


def real_key_forms() -> set[str]:
    return set().union(*(secret_forms(key) for key in default_keys().values()))


def agent_calls(outcome: EpisodeOutcome) -> list[dict]:
    return [entry for entry in outcome.transcript if entry["by"] == "agent"]


def replayable(outcome: EpisodeOutcome) -> dict:
    """Everything an episode produces except its wall time."""
    data = outcome.to_json()
    del data["duration_s"]
    return data


# ---------------------------------------------------------------------------------------------- the data


async def test_the_test_tasks_golden_answers_hold_in_the_recorded_world(gateway):
    runtime = gateway.runtime
    seoul = (await runtime.call("get_seoul_api_key", {}, "facts")).records[0]["api_key"]
    ex = (await runtime.call("get_ex_api_key", {}, "facts")).records[0]["api_key"]

    async def records(tool, **args):
        result = await runtime.call(tool, args, "facts")
        assert result.outcome.value in OK, result.message
        return result

    assert (await records("search_subway_stations", KEY=seoul, STATION_NM="서울대입구")).records[0]["STATION_CD"] == "0228"
    line2 = await records("search_subway_stations", KEY=seoul, LINE_NUM="02호선")
    gyeongbu = await records("list_tollbooths", KEY=ex, routeName="경부선")
    assert (gyeongbu.total_count, line2.total_count) == (40, 51)  # ep-number-parallel: 40 + 51
    city_hall = await records("search_subway_stations", KEY=seoul, STATION_NM="시청", LINE_NUM="02호선")
    assert [r["FR_CODE"] for r in city_hall.records] == ["201"]
    assert [r["unitCode"] for r in (await records("list_tollbooths", KEY=ex, unitName="판교")).records] == ["102"]
    pages = [await records("search_subway_stations", KEY=seoul, LINE_NUM="02호선", numOfRows=30, pageNo=n)
             for n in (1, 2)]
    names = [r["STATION_NM"] for page in pages for r in page.records]
    assert len(names) == 51 and sum(n.endswith("입구") for n in names) == 4  # ep-paging-count
    assert sum(n.endswith("입구") for n in names[:30]) != 4  # the first page alone gives another count
    page2 = await records("search_subway_stations", KEY=seoul, LINE_NUM="02호선", pageNo=2)
    assert page2.records[1]["STATION_NM"] == "건대입구"  # ep-paging-watchlist: the 12th station


def test_the_test_tasks_cover_every_kind_of_episode(episode_tasks):
    tasks = episode_tasks.values()
    assert {t.response_type for t in tasks} >= {ResponseType.STRING, ResponseType.NUMBER, ResponseType.JUDGE}
    assert any(t.golden_state_hash for t in tasks)
    assert any(t.pages for t in tasks) and any(not t.pages for t in tasks)
    assert any(len({a.step for a in t.golden_actions}) < len(t.golden_actions) for t in tasks)  # a parallel step


# ---------------------------------------------------------------------------------------------- baselines


def test_the_oracle_scored_one_while_recording(recorded_bundle, episode_tasks):
    _, outcomes = recorded_bundle
    assert set(outcomes) == set(episode_tasks)
    for task_id, outcome in outcomes.items():
        assert (outcome.passed, outcome.action.action, outcome.error) == (True, 1.0, None), task_id


async def test_the_oracle_scores_one_on_every_task_in_replay(gateway, episode_tasks):
    for task in episode_tasks.values():
        outcome = await run_episode(task, OracleAgent(), gateway, seed=1, rollout=2)
        assert outcome.error is None, outcome.error
        assert outcome.passed, (task.id, outcome.scores())
        assert outcome.action.action == 1.0, (task.id, outcome.scores()["action"])
        assert [e["outcome"] for e in outcome.transcript if e["outcome"] not in OK] == [], task.id
        assert (outcome.result.task_id, outcome.result.seed, outcome.result.rollout) == (task.id, 1, 2)
        assert (outcome.result.passed, outcome.result.action) == (True, 1.0)


async def test_first_page_fails_exactly_the_tasks_whose_golden_trajectory_pages(gateway, episode_tasks):
    verdicts = {}
    for task in episode_tasks.values():
        outcome = await run_episode(task, FirstPageAgent(), gateway, seed=0)
        verdicts[task.id] = outcome.passed
        pages_asked = [e["args"].get("pageNo", 1) for e in agent_calls(outcome)]
        assert all(page == 1 for page in pages_asked), (task.id, pages_asked)
        if task.pages:
            assert outcome.action.action < 1.0, task.id
    assert verdicts == {task.id: not task.pages for task in episode_tasks.values()}


async def test_first_page_answers_from_the_records_it_saw(gateway, episode_tasks):
    outcome = await run_episode(episode_tasks["ep-paging-count"], FirstPageAgent(), gateway, seed=0)
    assert outcome.response is not None and outcome.response.method == "numeric"
    assert outcome.response.extracted == "30"  # the first page of 30, not the 4 the question asks for
    watch = await run_episode(episode_tasks["ep-paging-watchlist"], FirstPageAgent(), gateway, seed=0)
    assert watch.final_state["watchlists"] == {}  # it never learnt the station, so it wrote nothing


def test_agents_are_found_by_name():
    assert isinstance(make_agent("oracle"), OracleAgent)
    assert isinstance(make_agent("first-page"), FirstPageAgent)
    with pytest.raises(ValueError, match="unknown agent 'gpt'; choose one of first-page, listed-order, openai, oracle"):
        make_agent("gpt")


# ---------------------------------------------------------------------------------------------- transcript


async def test_the_transcript_has_every_call_and_no_real_key(gateway, episode_tasks, recorded_bundle):
    task = episode_tasks["ep-number-parallel"]
    outcome = await run_episode(task, OracleAgent(), gateway, seed=5)
    harness = [e for e in outcome.transcript if e["by"] == "harness"]
    assert [(e["binds"], e["tool"]) for e in harness] == [("ex_api_key", "get_ex_api_key"),
                                                           ("seoul_api_key", "get_seoul_api_key")]
    context = outcome.runtime_context
    assert context["current_date"] == "2026-01-30"
    assert context["ex_api_key"] == episode_key_token("ex", task.id, 5, 0)
    golden = [(a.tool, resolve_placeholders(a.args, context)) for a in task.golden_actions]
    assert [(e["tool"], e["args"]) for e in agent_calls(outcome)] == golden
    assert [e["index"] for e in outcome.transcript] == list(range(len(outcome.transcript)))
    line2 = next(e for e in agent_calls(outcome) if e["tool"] == "search_subway_stations")
    assert (line2["outcome"], line2["total_count"], line2["n_records"], line2["error"]) == (
        "semantic_success", 51, 10, None)
    episodes = [outcome, *recorded_bundle[1].values()]  # the recorded ones went to the upstream with real keys
    texts = [json.dumps(e.to_json(), ensure_ascii=False) for e in episodes]
    assert not [(form, e.task_id) for form in real_key_forms() for e, text in zip(episodes, texts) if form in text]


async def test_the_agent_sees_the_runtime_context_and_the_answer_format(gateway, episode_tasks):
    seen: list[EpisodeContext] = []

    class Peek:
        name = "peek"

        async def run(self, context: EpisodeContext) -> str:
            seen.append(context)
            return "ANSWER: {0228}"

    task = episode_tasks["ep-string"]
    outcome = await run_episode(task, Peek(), gateway, seed=0)
    context = seen[0]
    token = episode_key_token("seoul", task.id, 0, 0)
    assert f"seoul_api_key: {token}" in context.system_prompt
    assert context.system_prompt.endswith(RESPONSE_FORMATS[ResponseType.STRING])
    assert (context.query, [t.name for t in context.tools]) == (task.query, ["search_subway_stations"])
    schema = context.tools[0].parameters
    assert "KEY" in schema["properties"] and "KEY" in schema["required"]  # the bench profile
    assert context.tools[0].page_no_param == "pageNo"
    assert context.tools[0].as_openai()["function"]["name"] == "search_subway_stations"
    # Right answer without a single call: RESPONSE passes, ACTION grades the empty trajectory at 0.
    assert outcome.passed and outcome.action.action == 0.0


def test_the_system_prompt_has_its_three_parts():
    prompt = build_system_prompt("number", {"current_date": "2026-01-30", "dart_api_key": "kopa-dart-00"})
    base, block, suffix = prompt.split("\n\n")
    assert "<RUNTIME_CONTEXT>\ncurrent_date: 2026-01-30\ndart_api_key: kopa-dart-00\n</RUNTIME_CONTEXT>" in block
    assert "\\boxed{" in suffix
    assert "RUNTIME_CONTEXT" not in build_system_prompt("string", {})  # no system state: no block
    assert build_system_prompt("judge").endswith(RESPONSE_FORMATS[ResponseType.JUDGE])
    assert build_system_prompt(None).count("\n\n") == 0  # ENVIRONMENT-only task: no format suffix
    with pytest.raises(ValueError, match="unknown response type 'text'; use one of string, number, judge"):
        build_system_prompt("text")


# ---------------------------------------------------------------------------------------------- misbehaviour


class ScriptedBadAgent:
    """A model gone wrong: an unknown tool, wrong argument types, unparsable arguments, a tool it was not
    offered, then no answer at all."""

    name = "bad"

    async def run(self, context: EpisodeContext) -> str | None:
        key = context.runtime_context["seoul_api_key"]
        results = [
            await context.call("get_subway_magic", {"LINE_NUM": "02호선"}),
            await context.call("search_subway_stations", {"KEY": key, "LINE_NUM": 2, "pageNo": "two"}),
            await context.call("search_subway_stations", {"LINE_NUM": "02호선"}),  # no KEY
            await context.call("search_subway_stations", '{"LINE_NUM": "02호선"'),  # broken JSON, as sent
            await context.call("list_tollbooths", {"KEY": key}),
            await context.call("search_subway_stations", {"LINE_NUM": "02호선", "KEY": "made-up"}),
        ]
        assert all(r.is_error for r in results)  # refused as tool errors the model would see
        return None


async def test_a_misbehaving_agent_is_scored_and_never_crashes_the_episode(gateway, episode_tasks):
    outcome = await run_episode(episode_tasks["ep-paging-count"], ScriptedBadAgent(), gateway, seed=0)
    calls = agent_calls(outcome)
    assert [(c["tool"], c["outcome"]) for c in calls] == [
        ("get_subway_magic", "schema_mismatch"), ("search_subway_stations", "schema_mismatch"),
        ("search_subway_stations", "missing_field"), ("search_subway_stations", "schema_mismatch"),
        ("list_tollbooths", "schema_mismatch"), ("search_subway_stations", "auth_error")]
    assert "not available in this task" in calls[0]["error"] and "not available in this task" in calls[4]["error"]
    assert "expects string" in calls[1]["error"] and "'KEY'" in calls[2]["error"] and "JSON object" in calls[3]["error"]
    for keyless in (calls[2], calls[5]):  # the task offers no key tool: the model is sent to the key it was given
        assert "given (seoul_api_key) as KEY" in keyless["error"] and "get_seoul_api_key" not in keyless["error"]
    assert calls[3]["args"] == '{"LINE_NUM": "02호선"'
    assert not outcome.passed and outcome.error is None
    assert outcome.response is not None and outcome.response.method == "no_answer"
    assert outcome.action.corr == 0.0 and outcome.action.n_total == 6
    assert outcome.result.passed is False
    json.dumps(outcome.to_json())  # all of it is plain JSON


async def test_an_agent_that_raises_or_hangs_fails_its_episode_only(gateway, episode_tasks):
    class Raises:
        name = "raises"

        async def run(self, context: EpisodeContext) -> str:
            await context.call("search_subway_stations", {"KEY": context.runtime_context["seoul_api_key"],
                                                          "STATION_NM": "서울대입구"})
            raise RuntimeError("the endpoint went away")

    class Hangs:
        name = "hangs"

        async def run(self, context: EpisodeContext) -> str:
            await asyncio.Event().wait()  # never set
            return "never"

    task = episode_tasks["ep-string"]
    raised = await run_episode(task, Raises(), gateway, seed=0)
    assert raised.error == "agent 'raises' raised RuntimeError: the endpoint went away"
    assert (raised.passed, raised.answer, raised.action.corr) == (False, None, 1.0)  # its call still counts
    hung = await run_episode(task, Hangs(), gateway, seed=0, timeout_s=0.05)
    assert hung.error == "agent 'hangs' gave no answer within 0.05 s" and not hung.passed


async def test_each_episode_starts_from_a_fresh_session(gateway, episode_tasks):
    task = episode_tasks["ep-env-note"]
    first = await run_episode(task, OracleAgent(), gateway, seed=0, session_id="shared")
    assert first.final_state["notes"] == {"판교 영업소코드": "102"} and first.passed

    class Idle:
        name = "idle"

        async def run(self, context: EpisodeContext) -> str:
            return "할 일이 없습니다."

    second = await run_episode(task, Idle(), gateway, seed=0, session_id="shared")
    assert second.final_state == {"watchlists": {}, "reports": {}, "notes": {}}
    assert second.environment is not None and not second.environment.passed and not second.passed


async def test_a_golden_placeholder_the_system_state_does_not_define_is_refused(gateway, episode_tasks):
    raw = episode_tasks["ep-string"].model_dump(mode="json")
    raw["golden_actions"][0]["args"]["KEY"] = "{dart_api_key}"
    with pytest.raises(ValueError, match=r"golden_actions\.0 \(search_subway_stations\) uses placeholder\(s\) "
                                         r"\['\{dart_api_key\}'\] but the system state defines only \['seoul_api_key'\]"):
        await run_episode(parse_task(raw), OracleAgent(), gateway, seed=0)


async def test_an_episode_refuses_a_gateway_outside_the_bench_profile(recorded_bundle, episode_tasks):
    chat = open_gateway(home=TEST_DATA_DIR, profile="chat", mode="replay", cassettes=recorded_bundle[0],
                        bundle=BUNDLE)
    try:
        with pytest.raises(ValueError, match="needs a gateway opened with profile='bench', got 'chat'"):
            await run_episode(episode_tasks["ep-string"], OracleAgent(), chat, seed=0)
    finally:
        await chat.aclose()


# ---------------------------------------------------------------------------------------------- determinism


async def test_two_replayed_runs_with_the_same_seed_are_identical(recorded_bundle, episode_tasks):
    async def run_all() -> list[dict]:
        gateway = replay_gateway(recorded_bundle[0])
        try:
            return [replayable(await run_episode(task, agent, gateway, seed=7, rollout=r))
                    for task in episode_tasks.values() for agent in (OracleAgent(), FirstPageAgent(), ScriptedBadAgent())
                    for r in (0, 1)]
        finally:
            await gateway.aclose()

    first, second = await run_all(), await run_all()
    assert first == second
    assert first[0]["runtime_context"] != first[1]["runtime_context"]  # another rollout, another key token


async def test_the_llm_judge_grades_judge_answers_when_enabled_and_its_use_is_recorded(gateway, episode_tasks):
    from bench.scoring.judge import LLMJudge
    from models.settings import JudgeProfile
    from tests.bench.test_response_scorer import StandInJudge

    task = episode_tasks["ep-judge"]
    standin = StandInJudge()
    with standin.server:
        judge = LLMJudge(JudgeProfile(base_url=standin.base_url, model="stand-in-judge"))
        judged = await run_episode(task, OracleAgent(), gateway, seed=0, judge=judge)
        standin.script = [(503, "overloaded"), (503, "still overloaded")]  # the judge cannot be asked
        fallback = await run_episode(task, OracleAgent(), gateway, seed=0, judge=judge)
    assert judged.passed and judged.response.method == "judge" and judged.response.judge_model == "stand-in-judge"
    assert "VERDICT: PASS" in judged.response.judge_verdict and judged.error is None
    assert fallback.response.method != "judge" and "judge unavailable" in fallback.error
    assert len(standin.requests) >= 2
