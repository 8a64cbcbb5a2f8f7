"""The one agent step (``bench.agents.step``): budgets, the answer to calls it does not run, and the token view.

The model is a script of replies; the tools run through a recording ``call``. The token codec is a character codec
(one id per character of each rendered message): the bookkeeping it checks is the step's, whatever the tokenizer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bench.agents.step import AgentStep, BudgetSpent, Generation, RepeatedTurns, TokenTrace, TurnLimitReached
from bench.limits import EpisodeLimits
from mcp_gateway.runtime import Outcome, ToolResult
from models.toolcalls import ToolCall, render_assistant

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "page": {"type": "integer"}}}}}]


def calls(*queries: str) -> str:
    return render_assistant("", [ToolCall("lookup", {"q": q}) for q in queries], text_format="hermes")


def play(replies: list[Any], limits: EpisodeLimits, *, counted: bool = False,
         **options: Any) -> tuple[Any, list[dict], list[tuple], AgentStep]:
    """Play ``replies``; each call's result holds its query (and, ``counted``, how many calls ran before it)."""
    ran: list[tuple[str, Any]] = []

    async def call(tool: str, args: Any) -> ToolResult:
        ran.append((tool, args))
        record = {"q": args.get("q")} | ({"n": len(ran)} if counted else {})
        return ToolResult(tool=tool, outcome=Outcome.SEMANTIC_SUCCESS, records=[record], total_count=1)

    async def generate(messages: list[dict], tools: list[dict]) -> Any:
        return replies.pop(0)

    step = AgentStep(limits, call, **options)
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]

    async def go() -> Any:
        try:
            return await step.run(messages, TOOLS, generate)
        except Exception as exc:  # noqa: BLE001 - the test looks at which
            return exc

    return asyncio.run(go()), messages, ran, step


def told(message: dict) -> dict:
    return json.loads(message["content"])


def test_calls_past_the_turn_width_and_the_call_budget_are_answered_not_run():
    not_run: list[tuple[int, str, str]] = []
    answer, messages, ran, step = play(
        [calls("a", "b", "c"), calls("d", "e"), "끝"], EpisodeLimits(max_parallel_calls=2, max_calls=3),
        on_not_run=lambda turn, call, why: not_run.append((turn, call.id, why)))
    assert answer == "끝" and [a["q"] for _, a in ran] == ["a", "b", "d"] and step.calls_run == 3
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0_0", "call_0_1", "call_0_2", "call_1_0", "call_1_1"]
    assert [told(m)["outcome"] for m in tool_messages] == ["semantic_success", "semantic_success", "not_run",
                                                           "semantic_success", "not_run"]
    assert "at most 2 tool calls are run per turn" in told(tool_messages[2])["message"]
    assert "call budget of 3 tool calls is spent" in told(tool_messages[4])["message"]
    assert [(t, i) for t, i, _ in not_run] == [(0, "call_0_2"), (1, "call_1_1")]
    # the assistant messages carry every call as written, run or not, in the OpenAI wire form
    assert [json.loads(c["function"]["arguments"]) for c in messages[2]["tool_calls"]] == [{"q": "a"}, {"q": "b"},
                                                                                        {"q": "c"}]


def test_the_turn_limit_and_the_prompt_budget_end_the_episode():
    result, messages, ran, _ = play([calls("a"), calls("b")], EpisodeLimits(max_turns=2))
    assert isinstance(result, TurnLimitReached) and len(ran) == 2  # the last turn's calls still run
    big = "가" * 3000  # ~3,000 approximate tokens of tool output would follow: the second request is over budget
    result, messages, ran, step = play([calls(big), "끝"], EpisodeLimits(max_prompt_tokens=2000, max_tool_tokens=8000))
    assert isinstance(result, BudgetSpent) and "exceeds the prompt budget of 2000 tokens" in str(result)
    assert step.turns == 1 and len(ran) == 1


def test_an_episode_stops_at_its_third_turn_in_a_row_with_the_same_calls_and_results():
    limits = EpisodeLimits(max_repeated_turns=3)
    # two repeats of "a" are not three; the third "b" turn ends the episode, its calls run, before any answer
    result, messages, ran, step = play([calls("a"), calls("a"), calls("b"), calls("b"), calls("b"), "끝"], limits)
    assert isinstance(result, RepeatedTurns) and isinstance(result, TurnLimitReached)
    assert "same calls (lookup) with the same results 3 turns in a row: stopped at turn 5" in str(result)
    assert [a["q"] for _, a in ran] == ["a", "a", "b", "b", "b"] and step.turns == 5
    # the same unreadable call three times is a loop too
    result, _, ran, _ = play(["<tool_call>{oops</tool_call>"] * 3 + ["끝"], limits)
    assert isinstance(result, RepeatedTurns) and ran == []
    # the same calls getting new results are not: the model may be paging or waiting
    answer, _, ran, _ = play([calls("a")] * 4 + ["끝"], limits, counted=True)
    assert answer == "끝" and len(ran) == 4
    # nor are repeats broken by another turn: a, a, b, a, a
    answer, _, _, _ = play([calls("a"), calls("a"), calls("b"), calls("a"), calls("a"), "끝"], limits)
    assert answer == "끝"
    # without the limit (the paper's), repeats go on to the answer or the turn limit
    answer, _, ran, _ = play([calls("a")] * 5 + ["끝"], EpisodeLimits())
    assert answer == "끝" and len(ran) == 5


def test_an_empty_reply_is_asked_again_without_tools_when_configured():
    answer, messages, _, step = play(["", "답"], EpisodeLimits(), retry_empty_without_tools=True)
    assert answer == "답" and step.turns == 2 and messages[-1] == {"role": "assistant", "content": "답"}
    answer, _, _, _ = play([""], EpisodeLimits())
    assert answer is None


class CharCodec:
    """One id per character of each message rendered as JSON: enough to check what the step masks."""

    special_tokens = ("<|end|>",)

    @staticmethod
    def ids(messages: list[dict]) -> list[int]:
        return [ord(ch) for m in messages for ch in json.dumps(m, ensure_ascii=False)]

    async def start(self, trace: TokenTrace, messages: list[dict], tools: list[dict]) -> None:
        trace.ids = self.ids(messages)

    async def add_context(self, trace: TokenTrace, seen: list[dict], messages: list[dict], tools: list[dict]) -> None:
        added = self.ids(messages[len(seen):])
        trace.ids, trace.response_mask = trace.ids + added, trace.response_mask + [0] * len(added)

    async def add_generation(self, trace: TokenTrace, generation: Generation) -> None:
        trace.ids, trace.response_mask = (trace.ids + list(generation.token_ids),
                                          trace.response_mask + [1] * len(generation.token_ids))


def generation(text: str) -> Generation:
    return Generation(text, [ord(c) for c in text])


def test_the_token_option_masks_what_the_model_wrote_and_nothing_else():
    first, second = calls("a") + "<|end|>", "ANSWER: {1}<|end|>"
    trace = TokenTrace(CharCodec())
    answer, messages, ran, _ = play([generation(first), generation(second)], EpisodeLimits(), tokens=trace)
    assert answer == "ANSWER: {1}" and len(ran) == 1
    written = "".join(chr(i) for i, m in zip(trace.response_ids, trace.response_mask, strict=True) if m)
    assert written == first + second  # exactly the generations, with their end tokens
    context = "".join(chr(i) for i, m in zip(trace.response_ids, trace.response_mask, strict=True) if not m)
    assert context == json.dumps(messages[3], ensure_ascii=False)  # the tool message, rendered as the codec does
    assert trace.prompt_ids == CharCodec.ids(messages[:2]) and (trace.generations, trace.context_rounds) == (2, 1)


def test_a_full_response_budget_ends_the_episode_as_verls_tool_agent_loop_does():
    # a generation that fills the budget is the final message: its calls are not run
    trace = TokenTrace(CharCodec(), max_response_tokens=10)
    answer, _, ran, _ = play([generation(calls("a"))], EpisodeLimits(), tokens=trace)
    assert ran == [] and trace.budget_spent and "<tool_call>" in answer
    # tool messages that overflow it stop the episode before the next generation
    trace = TokenTrace(CharCodec(), max_response_tokens=len(calls("a")) + 20)
    result, _, ran, step = play([generation(calls("a")), generation("끝")], EpisodeLimits(), tokens=trace)
    assert isinstance(result, BudgetSpent) and "overflow the response budget" in str(result)
    assert len(ran) == 1 and step.turns == 1


@pytest.mark.parametrize("bad", [{"max_turns": 0}, {"max_calls": -1}, {"max_tool_tokens": 10},
                                 {"max_repeated_turns": 1}, {"turns": 3}])
def test_bad_limits_are_refused_by_name(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        EpisodeLimits(**bad)
