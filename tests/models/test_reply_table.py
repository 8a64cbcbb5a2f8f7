"""Every reader of model replies gives the reply table's answer (``reply_table.py``): the reader itself, the bench's
``openai`` agent, the agent endpoint's loop, a training rollout (``train.episode``), the verl agent loop's reading
of a generation, and the record the reward scores.

Text rows go to every consumer; message rows (structured ``tool_calls``) to those that receive OpenAI messages
(the reader, the bench agent, the endpoint): a training policy answers with text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bench.agents.base import EpisodeContext, ToolInfo
from bench.agents.openai_agent import OpenAIAgent, ToolCallRequest
from bench.agents.step import read_generation
from bench.limits import EpisodeLimits
from bench.scoring.action import GoldenCall, PredictedCall, score_action
from mcp_gateway.runtime import Outcome, ToolResult
from models.toolcalls import INVALID_CALL, AssistantTurn, choose_parser, read_message, read_text, template_messages
from train.episode import PolicyAgent

from .reply_table import ROWS, TEXT_ROWS, TOOLS, Row, expected, typed

Answer = tuple[str, list[tuple[str, Any, str | None]], list[str]]  # content, calls, problems


def check(row: Row, content: str, calls: list[tuple[str, Any, str | None]], problems: list[str]) -> None:
    assert content == row.content, row.id
    assert typed([(n, a) for n, a, _ in calls]) == expected(row), row.id
    for (_, _, problem), (_, _, wanted) in zip(calls, row.calls):
        assert (problem is None) == (wanted is None) and (wanted is None or wanted in problem), row.id
    assert len(problems) == len(row.problems), (row.id, problems)
    for problem, wanted in zip(problems, row.problems):
        assert wanted in problem and "<tool_call>" in problem, (row.id, problem)


def as_message(row: Row) -> dict[str, Any]:
    return json.loads(json.dumps(row.reply)) if row.structured else {"role": "assistant", "content": row.reply}


def turn_answer(turn: AssistantTurn) -> Answer:
    return turn.content, [(c.name, c.arguments, c.problem) for c in turn.calls], list(turn.problems)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_reader_gives_each_reply_its_meaning(row):
    turn = read_message(row.reply, TOOLS) if row.structured else read_text(row.reply, TOOLS)
    check(row, *turn_answer(turn))
    if not row.structured:  # a completion whose content holds the text reads the same
        assert read_message(as_message(row), TOOLS) == turn


def requests_answer(message: dict[str, Any], requests: list[ToolCallRequest]) -> Answer:
    content = message.get("content") or ""
    calls = [(r.name, r.arguments, r.arguments_problem) for r in requests if r.problem is None]
    problems = [r.problem for r in requests if r.problem is not None]
    assert all(r.name == INVALID_CALL for r in requests if r.problem is not None)
    assert len({r.id for r in requests}) == len(requests)  # every call, read or not, has its own id
    return content, calls, problems


def run_requests(agent: OpenAIAgent, requests: list[ToolCallRequest]) -> list[tuple[str, Any]]:
    """What the agent passes to the harness for ``requests`` (its agent step's ``run_calls``): unreadable calls are
    not run; each call's tool message says what was wrong with it."""
    ran: list[tuple[str, Any]] = []

    async def call(tool: str, args: Any) -> ToolResult:
        ran.append((tool, args))
        return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS)

    replies = asyncio.run(agent.step(call).run_calls(requests, 0))
    for request, reply in zip(requests, replies, strict=True):
        told = json.loads(reply["content"])
        assert reply["tool_call_id"] == request.id
        if request.problem is not None:
            assert told["outcome"] == Outcome.SCHEMA_MISMATCH.value and told["message"] == request.problem
        elif request.arguments_problem is not None:
            assert told["arguments_error"] == request.arguments_problem
        elif isinstance(request.arguments, dict):
            assert "arguments_error" not in told
    return ran


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_bench_openai_agent_reads_each_reply_alike(row):
    agent = OpenAIAgent(base_url="http://127.0.0.1:9/v1", model="scripted")
    message = as_message(row)
    requests = agent.tool_calls(message, 0, TOOLS)
    check(row, *requests_answer(message, requests))
    assert typed(run_requests(agent, requests)) == expected(row)
    if row.structured and message.get("tool_calls"):  # as written, for the assistant message sent back
        assert [r.raw_arguments for r in requests] == [c["function"]["arguments"] for c in message["tool_calls"]]
        assert [r.id for r in requests] == [c["id"] for c in message["tool_calls"]]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_the_agent_endpoint_reads_each_reply_alike_and_records_what_it_cannot_read(row):
    from appliance.serving.agent_endpoint import _EndpointLoop
    from bench.agents.llm_config import OpenAIAgentConfig

    trajectory: list[dict[str, Any]] = []
    loop = _EndpointLoop(OpenAIAgentConfig(base_url="http://127.0.0.1:9/v1", model="scripted"), choose_parser(),
                         trajectory)
    message = as_message(row)
    requests = loop.tool_calls(message, 0, TOOLS)
    check(row, *requests_answer(message, requests))
    assert [(s["outcome"], s["message"]) for s in trajectory] == [("malformed_tool_call", r.problem)
                                                                  for r in requests if r.problem is not None]


def tool_infos() -> tuple[ToolInfo, ...]:
    return tuple(ToolInfo(name=t["function"]["name"], description="", parameters=t["function"]["parameters"])
                 for t in TOOLS)


def play_policy(reply: str) -> tuple[PolicyAgent, str | None, list[tuple[str, Any]]]:
    """A training rollout's agent on ``reply`` then an empty message; the calls it passed to the harness."""
    ran: list[tuple[str, Any]] = []

    async def call(tool: str, args: Any) -> ToolResult:
        ran.append((tool, args))
        return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS)

    replies = [reply, ""]

    async def policy(messages: Any, tools: Any) -> str:
        return replies.pop(0)

    agent = PolicyAgent(policy, EpisodeLimits(max_turns=3, max_parallel_calls=8))
    context = EpisodeContext(task=None, system_prompt="You call tools.", query="go",  # type: ignore[arg-type]
                             tools=tool_infos(), runtime_context={}, response_type=None, seed=0, rollout=0, call=call)
    answer = asyncio.run(agent.run(context))
    return agent, answer, ran


@pytest.mark.parametrize("row", TEXT_ROWS, ids=lambda r: r.id)
def test_a_training_rollout_reads_each_reply_alike_and_tells_the_policy_what_it_cannot_read(row):
    agent, answer, ran = play_policy(row.reply)
    assert typed(ran) == expected(row), row.id
    assistant = agent.messages[2]
    assert assistant["content"] == row.content
    if not row.calls and not row.problems:  # an answer: the episode ends with it
        assert answer == (row.content or None) and "tool_calls" not in assistant
        return
    # as chat templates receive them: the arguments as objects (the conversation keeps them as JSON text)
    sent = [c["function"] for c in template_messages([assistant], TOOLS)[0]["tool_calls"]]
    invalid = [{"name": INVALID_CALL, "arguments": {}}] * len(row.problems)
    assert sent == [{"name": n, "arguments": a} for n, a, _ in row.calls] + invalid
    told = [json.loads(m["content"]) for m in agent.messages[3:3 + len(sent)]]
    assert [m["message"] for m in told[len(row.calls):]] == [p for p in read_text(row.reply, TOOLS).problems]
    assert all(m["outcome"] == "schema_mismatch" for m in told[len(row.calls):])


@pytest.mark.parametrize("row", TEXT_ROWS, ids=lambda r: r.id)
def test_the_verl_agent_loop_reads_each_generation_alike(row):
    turn = read_generation(row.reply + "<|im_end|>", TOOLS, special_tokens=["<|im_end|>", "<tool_call>"])
    check(row, *turn_answer(turn))
    assert turn.raw == row.reply + "<|im_end|>"


KNOWN = {t["function"]["name"] for t in TOOLS}


@pytest.mark.parametrize("row", [r for r in TEXT_ROWS if r.calls and {n for n, *_ in r.calls} <= KNOWN],
                         ids=lambda r: r.id)
def test_the_reward_scores_the_calls_the_reader_read(row):
    """``train.reward`` scores the record's calls (``episode_record``: the transcript's JSON copy of the arguments
    the harness got); the bench scorers score the arguments themselves. Both are the reader's, and score alike."""
    _, _, ran = play_policy(row.reply)
    record_calls = json.loads(json.dumps([{"tool": t, "args": a} for t, a in ran], ensure_ascii=False))
    assert typed([(c["tool"], c["args"]) for c in record_calls]) == expected(row)
    golden = [GoldenCall(n, a, tuple(a)) for n, a, _ in row.calls]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    bench = score_action(golden, [PredictedCall(t, a) for t, a in ran], schemas, 10)
    reward = score_action(golden, [PredictedCall(c["tool"], c["args"]) for c in record_calls], schemas, 10)
    assert reward == bench  # whole scores, the argument checks of every candidate included
