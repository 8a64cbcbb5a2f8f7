"""The GRPO reward is the bench's score: ``score_record(episode_record(task, outcome))`` gives the verdicts the
episode itself got, field by field, for passing and failing episodes, because both score with the one function
``bench.scoring.verdicts.score_trajectory``.

Real parts only: strict replay of the shipped bundle (cassettes/, an empty home), bench.episode, the bench agents,
rollouts of scripted policies (train.episode, train.policies). The last tests replace the scorers *inside*
``bench.scoring.verdicts`` and show both the episode and the reward follow: a copy of the logic in train.reward
would not.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

import bench.scoring.verdicts as verdicts_module
from bench.agents import FirstPageAgent, OracleAgent
from bench.agents.oracle import format_answer, golden_steps
from bench.episode import run_episode
from bench.scoring import PredictedCall, Verdicts, score_trajectory
from bench.task import RewardBasis
from mcp_gateway.catalog import load_catalog
from train.episode import PolicyStop, episode_record, run_rollout
from train.policies import GoldenPolicy
from train.reward import RECORD_KEY, compute_score, score_record

from .conftest import IDS, bench_tasks, replay_gateway


class WrongAnswerAgent(OracleAgent):
    """The golden calls but the last step (a state task then misses its write), then an answer that is not golden."""

    name = "wrong-answer"

    async def run(self, context):
        steps = list(golden_steps(context.task))
        for actions in steps if RewardBasis.RESPONSE in context.task.reward_basis else steps[:-1]:
            await self._step(context, actions)
        return format_answer(context.task, "0") if context.task.response_type else "완료"


class RaisingAgent:
    """Breaks its own loop after one golden call: the episode ends without an answer, scored."""

    name = "raising"

    async def run(self, context):
        await OracleAgent._step(context, next(golden_steps(context.task))[:1])
        raise RuntimeError("the model's output could not be parsed")


class OddArgumentsAgent:
    """Calls a golden tool with every argument the wrong type, with arguments as broken JSON text and with a tuple
    where JSON has a list, calls a tool the task does not offer, then answers nothing useful."""

    name = "odd-arguments"

    async def run(self, context):
        golden = context.task.golden_actions[0]
        await context.call(golden.tool, {k: [v] for k, v in golden.args.items()})
        await context.call(golden.tool, '{"KEY": ')
        await context.call(golden.tool, {**golden.args, "pageNo": (1, 2)})
        await context.call("no_such_tool", {"x": 1})
        return "ANSWER: {모르겠습니다}"


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """(task id, how it was played, the EpisodeOutcome) for several trajectories per task, passing and failing."""
    home = tmp_path_factory.mktemp("empty-home")
    tasks = [bench_tasks()[i] for i in IDS]

    async def run():
        gateway = replay_gateway(home, tasks[0].bundle)
        played = []
        try:
            for t in tasks:
                played.append((t.id, "oracle", await run_episode(t, OracleAgent(), gateway, seed=0)))
                played.append((t.id, "first-page", await run_episode(t, FirstPageAgent(), gateway, seed=0)))
                played.append((t.id, "odd-arguments", await run_episode(t, OddArgumentsAgent(), gateway, seed=3)))
                played.append((t.id, "wrong", await run_episode(t, WrongAnswerAgent(), gateway, seed=1)))
                played.append((t.id, "raising", await run_episode(t, RaisingAgent(), gateway, seed=0, rollout=2)))
                for name, policy in (("golden", GoldenPolicy(t)), ("stopped", _stopper)):
                    played.append((t.id, name, (await run_rollout(t, policy, gateway)).outcome))
            return played
        finally:
            await gateway.aclose()

    return asyncio.run(run())


async def _stopper(messages, tools):
    raise PolicyStop("the response budget of 16 tokens is spent")


def _verdicts(outcome) -> Verdicts:
    return Verdicts(action=outcome.action, response=outcome.response, environment=outcome.environment,
                    passed=outcome.passed)


def _through_json(record):
    return json.loads(json.dumps(record, ensure_ascii=False))  # as it travels through Ray and verl's reward manager


def test_the_reward_of_an_episode_record_is_the_episodes_own_verdicts_field_by_field(episodes):
    seen = set()
    for task_id, how, outcome in episodes:
        task = bench_tasks()[task_id]
        record = _through_json(episode_record(task, outcome))
        reward = score_record(record)
        where = (task_id, how, outcome.scores())
        assert reward["passed"] == reward["score"] == float(outcome.passed), where
        assert reward["action"] == outcome.action.action, where
        assert reward["response_ok"] == float(outcome.response is None or outcome.response.passed), where
        assert reward["environment_ok"] == float(outcome.environment is None or outcome.environment.passed), where
        assert reward["n_calls"] == sum(e["by"] == "agent" for e in outcome.transcript) and reward["from_record"] == 1.0
        assert compute_score("kopa-edge", "ignored", "{}", {RECORD_KEY: record}) == reward
        seen.add((how, outcome.passed))
    passing = {how for how, passed in seen if passed}
    failing = {how for how, passed in seen if not passed}
    assert {"oracle", "golden"} <= passing and {"wrong", "raising", "stopped", "odd-arguments"} <= failing


def test_the_records_trajectory_scores_to_the_same_whole_verdicts(episodes):
    """Not only the reward's floats: the whole ACTION score (matches, reasons), RESPONSE and ENVIRONMENT."""
    catalog = load_catalog()
    for task_id, how, outcome in episodes:
        task = bench_tasks()[task_id]
        record = _through_json(episode_record(task, outcome))
        again = score_trajectory(task, runtime_context=record["runtime_context"],
                                 calls=[PredictedCall(c["tool"], c["args"]) for c in record["calls"]],
                                 answer=record["answer"], final_state=record["final_state"], catalog=catalog)
        assert again == _verdicts(outcome), (task_id, how)
    odd = [o for _, how, o in episodes if how == "odd-arguments"]
    assert all(o.action.action < 1.0 and not o.passed for o in odd)


def test_the_reward_follows_the_bench_scorer_not_a_copy_of_it(episodes, monkeypatch):
    """Change what ``bench.scoring.verdicts`` scores with: the reward of the same record changes with it."""
    oracle = {task_id: o for task_id, how, o in episodes if how == "oracle"}
    records = {task_id: _through_json(episode_record(bench_tasks()[task_id], o)) for task_id, o in oracle.items()}
    assert all(score_record(r)["score"] == 1.0 and score_record(r)["action"] == 1.0 for r in records.values())

    real_action, real_response = verdicts_module.score_action, verdicts_module.score_response
    real_environment = verdicts_module.score_environment
    monkeypatch.setattr(verdicts_module, "score_action",
                        lambda *a, **k: dataclasses.replace(real_action(*a, **k), action=0.25))
    monkeypatch.setattr(verdicts_module, "score_response", lambda task, answer: real_response(task, None))
    monkeypatch.setattr(verdicts_module, "score_environment",
                        lambda final, golden: real_environment({"notes": {"not": "golden"}}, golden))
    for task_id, record in records.items():
        basis = bench_tasks()[task_id].reward_basis
        reward = score_record(record)
        assert reward["action"] == 0.25 and reward["score"] == 0.0, task_id
        assert reward["response_ok"] == float(RewardBasis.RESPONSE not in basis), task_id
        assert reward["environment_ok"] == float(RewardBasis.ENVIRONMENT not in basis), task_id


def test_the_episode_follows_the_same_scorer(tmp_path, monkeypatch):
    """The other side of the same function: ``run_episode`` scores through ``bench.scoring.verdicts`` too."""
    task = bench_tasks()["fin-001"]
    real_action = verdicts_module.score_action
    monkeypatch.setattr(verdicts_module, "score_action",
                        lambda *a, **k: dataclasses.replace(real_action(*a, **k), action=0.25))

    async def run():
        gateway = replay_gateway(tmp_path, task.bundle)
        try:
            return await run_episode(task, OracleAgent(), gateway, seed=0)
        finally:
            await gateway.aclose()

    outcome = asyncio.run(run())
    assert outcome.action.action == outcome.result.action == 0.25 and outcome.passed
    assert score_record(episode_record(task, outcome))["action"] == 0.25
