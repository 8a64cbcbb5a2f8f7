"""Rollouts over strict replay of the shipped bundle, driven by scripted policies, scored by the bench scorers.

Real parts only: the replay gateway on cassettes/ (an empty home, no world), bench.episode, the bench scorers, the
tool-call reader (``models.toolcalls``; the qwen3_coder round trip: tests/models/test_toolcalls.py). The reward
function must give the bench's own verdict on the same trajectory, whatever the trajectory is.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bench.agents import OracleAgent
from bench.agents.oracle import format_answer, golden_steps
from bench.episode import run_episode
from bench.limits import EpisodeLimits
from bench.task import RewardBasis
from mcp_gateway.catalog import load_catalog
from models.toolcalls import ToolCall, read_text, render_assistant
from train.episode import PolicyStop, episode_record, parallel_width, run_rollout
from train.policies import GoldenPolicy, ScriptedPolicy, runtime_context_from_prompt
from train.reward import RECORD_KEY, compute_score

from .conftest import IDS, bench_tasks, replay_gateway

def wrong_answer(task):
    """The golden calls, then an answer that is not the golden one (a state-only task: one write too few)."""
    replies, context_holder = [], {}

    class Policy(GoldenPolicy):
        async def __call__(self, messages, tools):
            context_holder.update(runtime_context_from_prompt(messages[0]["content"]))
            reply = await super().__call__(messages, tools)
            if self.turn > len(self.steps):
                return format_answer(task, "0") if task.response_type else ""
            if RewardBasis.RESPONSE not in task.reward_basis and self.turn == len(self.steps):
                return ""  # stop before the last (writing) step: the final state misses it
            return reply

    del replies
    return Policy(task)


def other_value(value: str) -> str:
    """A value of the same shape (digits stay digits of the same length: dates and codes pass the schema)."""
    return str(int(value) + 7).zfill(len(value))[-len(value):] if value.isdigit() else value + "없는곳"


def miss_then_give_up(task):
    """One call the bundle holds no answer for and one to a tool the task does not offer, then a guess."""
    catalog = load_catalog()

    def changeable(a):  # string arguments that go upstream as they are (not filtered locally after the fetch)
        spec = catalog.get(a.tool)
        props = spec.input_schema()["properties"]
        return [k for k, v in a.args.items() if spec.endpoint and isinstance(v, str) and not v.startswith("{")
                and k != "KEY" and k not in (spec.endpoint.local_filters or {}) and "enum" not in props.get(k, {})][:1]

    first = next(a for steps in golden_steps(task) for a in steps if changeable(a))
    other = next(t for t in ("search_subway_stations", "get_dart_api_key", "evaluate_expression")
                 if t not in task.available_tools)

    class Policy(ScriptedPolicy):
        async def __call__(self, messages, tools):
            context = runtime_context_from_prompt(messages[0]["content"])
            if not self.seen:
                self.seen.append(list(messages))
                args = {k: (context.get(v[1:-1], v) if isinstance(v, str) and v.startswith("{") else v)
                        for k, v in first.args.items()}
                args = {**args, **{k: other_value(first.args[k]) for k in changeable(first)}}
                return render_assistant("", [ToolCall(first.tool, args), ToolCall(other, {})])
            self.seen.append(list(messages))
            return "ANSWER: {모르겠습니다}" if task.response_type else "완료"

    return Policy([])


class Stopper:
    async def __call__(self, messages, tools):
        raise PolicyStop("the response budget of 16 tokens is spent")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """(oracle outcome, golden rollout, wrong rollout, miss rollout, stopped rollout, gateway stats) per task."""
    home = tmp_path_factory.mktemp("empty-home")
    tasks = [bench_tasks()[i] for i in IDS]

    async def run():
        gateway = replay_gateway(home, tasks[0].bundle)
        try:
            out = {}
            for t in tasks:
                oracle = await run_episode(t, OracleAgent(), gateway, seed=0)
                out[t.id] = (oracle, await run_rollout(t, GoldenPolicy(t), gateway),
                             await run_rollout(t, wrong_answer(t), gateway),
                             await run_rollout(t, miss_then_give_up(t), gateway),
                             await run_rollout(t, Stopper(), gateway, limits=EpisodeLimits(max_turns=3)))
            return out, gateway.transport.stats.as_json(), len(gateway.runtime.sessions)
        finally:
            await gateway.aclose()

    return asyncio.run(run())


def test_the_golden_policy_reproduces_the_bench_oracle_score_over_replay(played):
    outcomes, _, open_sessions = played
    for task_id, (oracle, golden, *_) in outcomes.items():
        assert oracle.passed and oracle.action.action == 1.0, task_id
        assert golden.outcome.scores() == oracle.scores(), task_id
        assert golden.outcome.error is None and golden.turns == bench_tasks()[task_id].n_steps + 1
        # the conversation the policy saw: the bench's own system prompt, then one tool message per call
        assert golden.messages[0]["content"] == oracle_prompt(golden)
        assert sum(m["role"] == "tool" for m in golden.messages) == len(bench_tasks()[task_id].golden_actions)
    assert open_sessions == 0  # every rollout's session is dropped when it is scored
    assert max(parallel_width(bench_tasks()[i]) for i in IDS) >= 3  # parallel steps ran as one turn


def oracle_prompt(rollout):
    from bench.prompt import build_system_prompt

    task = bench_tasks()[rollout.outcome.task_id]
    return build_system_prompt(task.response_type, rollout.outcome.runtime_context)


def test_the_rollout_prompt_is_the_dataset_prompt(played, edge_dataset):
    import pyarrow.parquet as pq

    rows = {json.loads(r["extra_info"])["item_id"]: r for r in pq.read_table(edge_dataset / "train.parquet").to_pylist()}
    outcomes, *_ = played
    for task_id, (_, golden, *_) in outcomes.items():
        assert [dict(m) for m in rows[task_id]["prompt"]] == golden.messages[:2], task_id


def test_the_reward_is_the_bench_score_on_the_same_trajectory(played):
    outcomes, *_ = played
    seen = set()
    for task_id, (oracle, *rollouts) in outcomes.items():
        for rollout in rollouts:
            outcome = rollout.outcome
            # through JSON, as the record travels through Ray and verl's reward manager
            info = {"item_id": task_id, RECORD_KEY: json.loads(json.dumps(rollout.record))}
            reward = compute_score("kopa-edge", "ignored text", "{}", info)
            assert reward["score"] == reward["passed"] == float(outcome.passed), (task_id, outcome.scores())
            assert reward["action"] == pytest.approx(outcome.action.action)
            assert reward["from_record"] == 1.0 and reward["n_calls"] == len(rollout.record["calls"])
            seen.add(outcome.passed)
        oracle_reward = compute_score("kopa-edge", "", "{}", {RECORD_KEY: episode_record(bench_tasks()[task_id], oracle)})
        assert oracle_reward["score"] == 1.0 and oracle_reward["action"] == 1.0
        assert set(oracle_reward) == set(reward)  # verl takes the keys from the first sample: always the same
    assert seen == {True, False}
    for task_id, (_, _, wrong, *_) in outcomes.items():
        assert not wrong.outcome.passed, task_id  # the wrong answer (or missing write) fails, reward 0


def test_a_replay_miss_inside_a_rollout_is_a_scored_failure_not_a_crash(played):
    outcomes, stats, _ = played
    assert stats["misses"]  # the gateway did miss: the request was not in the bundle
    for task_id, (_, _, _, miss, stopped) in outcomes.items():
        outcome = miss.outcome
        agent_calls = [e for e in outcome.transcript if e["by"] == "agent"]
        assert [e["outcome"] for e in agent_calls] == ["replay_miss", "schema_mismatch"], task_id
        tool_messages = [json.loads(m["content"]) for m in miss.messages if m["role"] == "tool"]
        assert tool_messages[0]["outcome"] == "replay_miss" and tool_messages[1]["outcome"] == "schema_mismatch"
        assert not outcome.passed and outcome.action.action < 1.0
        assert compute_score("kopa-edge", "", "{}", {RECORD_KEY: miss.record})["score"] == 0.0
        # a policy that stops (its token budget spent) ends the episode without an answer, scored
        assert stopped.outcome.answer is None and not stopped.outcome.passed
        assert "PolicyStop" in stopped.outcome.error


def test_without_a_record_the_reward_scores_the_text_against_the_ground_truth():
    fin = bench_tasks()["fin-001"]
    truth = json.dumps({"response_type": fin.response_type.value, "accepted_answers": list(fin.accepted_answers),
                        "reward_basis": ["ACTION", "RESPONSE"], "golden_actions": []})
    good = compute_score("kopa-edge", f"<tool_response>…</tool_response> \\boxed{{{fin.accepted_answers[0]}}}", truth,
                         json.dumps({"item_id": "fin-001"}))
    assert good["score"] == 1.0 and good["from_record"] == 0.0 and good["action"] == 0.0
    assert compute_score("kopa-edge", "\\boxed{-1}", truth, {})["score"] == 0.0
    state = json.dumps({"response_type": None, "accepted_answers": [], "reward_basis": ["ACTION", "ENVIRONMENT"]})
    assert compute_score("kopa-edge", "완료", state, None)["score"] == 0.0  # no final state known: fails


def test_golden_calls_written_as_hermes_json_with_quoted_values_are_the_golden_trajectory(tmp_path):
    """The small model's format (hermes JSON) and a habit of quoting numbers: the reader types the values by the
    tool's schema (``models.toolcalls``), so the calls run, the record and the reward are the golden ones."""
    task = bench_tasks()["trf-001"]  # pageNo, numOfRows: integers
    written: list[str] = []

    class HermesPolicy(GoldenPolicy):
        async def __call__(self, messages, tools):
            text = await super().__call__(messages, tools)
            turn = read_text(text, tools)
            quoted = [ToolCall(c.name, {k: v if isinstance(v, str) else json.dumps(v) for k, v in c.arguments.items()})
                      for c in turn.calls]
            written.append(render_assistant("", quoted, text_format="hermes") if quoted else text)
            return written[-1]

    async def run():
        gateway = replay_gateway(tmp_path, task.bundle)
        try:
            return (await run_rollout(task, GoldenPolicy(task), gateway),
                    await run_rollout(task, HermesPolicy(task), gateway))
        finally:
            await gateway.aclose()

    golden, hermes = asyncio.run(run())
    assert written[0].startswith('<tool_call>\n{"name": ') and '"pageNo": "1"' in written[0]
    assert any(isinstance(v, int) for c in golden.record["calls"] for v in c["args"].values())  # there was a number
    assert hermes.record["calls"] == golden.record["calls"]
    assert hermes.outcome.scores() == golden.outcome.scores() and hermes.outcome.passed
    reward = compute_score("kopa-edge", "", "{}", {RECORD_KEY: json.loads(json.dumps(hermes.record))})
    assert reward["score"] == 1.0 and reward["action"] == 1.0
