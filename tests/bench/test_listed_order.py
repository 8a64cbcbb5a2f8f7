"""``listed-order`` earns what a random pick earns under the shuffled tool list, and all of it under golden-first.

Replays the shipped cassettes (the bundle the task set is pinned to) on the eval-v1 split's tasks. The bound is not a
fixed number: for each task the agent's walk (``planned_calls``) is played over many uniformly random orders of the
task's tools, giving the Corr a random pick gets (mean μ_i, variance σ_i²). Under the shuffle the episodes' mean Corr
must lie within μ ± 4·SE (SE = √Σσ_i² / n, the orders being independent), and μ + 4·SE must stay well below the
oracle's. With the tools shown golden-first, as task files list them, the same agent reproduces every golden call:
if the list order ever leaked the trajectory again, the shuffled run would score like that and fail the bound.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
from collections.abc import Sequence

import pytest

from bench.agents import AGENTS, AgentKind, OracleAgent, make_agent
from bench.agents.listed_order import ListedOrderAgent, planned_calls
from bench.episode import EpisodeOutcome, run_episode
from bench.splits import load_split
from bench.task import Task
from bench.taskset.build import DEFAULT_CASSETTES
from bench.tool_order import presented_order
from mcp_gateway.gateway import open_gateway

SPLIT = load_split("eval-v1")
DRAWS = 2000  # random orders per task for μ_i and σ_i²; their own error (< 0.01 on μ) is far inside 4·SE


def planned_corr(task: Task, order: Sequence[str]) -> float:
    """Corr of the agent's calls for ``order``: its golden-tool calls carry golden arguments, so each one matches."""
    golden_tools = {a.tool for a in task.golden_actions}
    return sum(tool in golden_tools for tool, _ in planned_calls(task, order)) / len(task.golden_actions)


def random_pick(tasks: Sequence[Task]) -> tuple[float, float]:
    """(mean Corr over the tasks under uniformly random orders, its standard error)."""
    rng = random.Random(0)
    means, variances = [], []
    for task in tasks:
        draws = []
        for _ in range(DRAWS):
            order = list(task.available_tools)
            rng.shuffle(order)
            draws.append(planned_corr(task, order))
        means.append(statistics.fmean(draws))
        variances.append(statistics.pvariance(draws))
    return statistics.fmean(means), math.sqrt(sum(variances)) / len(tasks)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, dict[str, EpisodeOutcome]]:
    """{"shuffled", "golden-first", "oracle"}: outcome per split task, seed 0, replaying the shipped bundle."""
    home = tmp_path_factory.mktemp("empty-home")

    async def play(agent) -> dict[str, EpisodeOutcome]:
        gateway = open_gateway(upstream="replay", profile="bench", home=home, cassettes=DEFAULT_CASSETTES,
                               bundle=SPLIT.tasks[0].bundle)
        try:
            return {t.id: await run_episode(t, agent, gateway, seed=0) for t in SPLIT.tasks}
        finally:
            await gateway.aclose()

    runs = {"shuffled": asyncio.run(play(ListedOrderAgent())), "oracle": asyncio.run(play(OracleAgent()))}
    with pytest.MonkeyPatch.context() as patch:  # the order before issue 37: the task file's, golden tools first
        patch.setattr("bench.episode.presented_order", lambda task_id, tools, seed: list(tools))
        runs["golden-first"] = asyncio.run(play(ListedOrderAgent()))
    return runs


def mean_corr(outcomes: dict[str, EpisodeOutcome]) -> float:
    return statistics.fmean(o.action.corr for o in outcomes.values())


def test_under_the_shuffle_it_gets_what_a_random_pick_gets_well_below_the_oracle(played):
    expected, se = random_pick(SPLIT.tasks)
    observed, oracle = mean_corr(played["shuffled"]), mean_corr(played["oracle"])
    assert oracle == 1.0
    assert abs(observed - expected) <= 4 * se, f"listed-order {observed:.3f}, random pick {expected:.3f} ± {se:.3f}"
    assert expected + 4 * se < 0.75 * oracle  # "well below": even the bound's top leaves a quarter of the oracle


def test_shown_golden_first_it_would_make_every_golden_call(played):
    assert {tid: o.action.corr for tid, o in played["golden-first"].items() if o.action.corr != 1.0} == {}
    assert mean_corr(played["golden-first"]) - mean_corr(played["shuffled"]) > 0.3


def test_it_calls_down_the_presented_list_one_call_per_golden_action(played):
    for task in SPLIT.tasks:
        outcome = played["shuffled"][task.id]
        calls = [(e["tool"], e["args"]) for e in outcome.transcript if e["by"] == "agent"]
        order = presented_order(task.id, task.available_tools, 0)
        assert calls == planned_calls(task, order, outcome.runtime_context), task.id
        assert len(calls) == len(task.golden_actions)
        assert outcome.action.corr == pytest.approx(planned_corr(task, order)), task.id
        assert outcome.answer is not None and outcome.answer.startswith("목록 순서대로 도구를 호출해"), task.id


def test_it_is_a_registered_baseline():
    assert AGENTS["listed-order"].kind is AgentKind.BASELINE
    assert isinstance(make_agent("listed-order"), ListedOrderAgent)
