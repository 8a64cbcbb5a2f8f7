"""The tool list does not give the answer away: a task file lists its golden tools first, in golden order, and a
model sees them shuffled (``bench.tool_order``), stable per task and seed, in the bench and in EDGE's exports.

"No position holds more than chance allows": for each index k of the shown lists, the number of tasks whose first
golden tool sits at k is compared with its distribution under uniform shuffles (a sum of independent Bernoulli
draws, p = 1/len(list) where the list is long enough): it must stay below mean + 4 standard deviations + 1. The
golden-first order fails that at k = 0 by a wide margin (checked too, so the check itself can fail).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from collections.abc import Sequence

import pytest

from bench.agents import OracleAgent
from bench.episode import run_episode
from bench.task import Task, load_tasks
from bench.taskset.build import DEFAULT_TASKS
from bench.tool_order import presented_order

TASKS = load_tasks(DEFAULT_TASKS)


def first_golden(task: Task) -> str:
    return min(task.golden_actions, key=lambda a: a.step).tool


def crowded_positions(shown: Sequence[tuple[Task, Sequence[str]]]) -> list[str]:
    """The list positions that hold the first golden tool more often than uniform shuffles allow (module doc)."""
    observed = Counter(list(names).index(first_golden(task)) for task, names in shown)
    longest = max(len(names) for _, names in shown)
    crowded = []
    for k in range(longest):
        ps = [1 / len(names) for _, names in shown if len(names) > k]
        mean, sd = sum(ps), math.sqrt(sum(p * (1 - p) for p in ps))
        if observed[k] > mean + 4 * sd + 1:
            crowded.append(f"position {k}: {observed[k]} of {len(shown)} (chance: {mean:.1f} ± {sd:.1f})")
    return crowded


def test_the_task_files_list_the_golden_tools_first_so_the_raw_order_fails_the_check():
    assert all(task.available_tools[0] == first_golden(task) for task in TASKS)
    assert crowded_positions([(t, t.available_tools) for t in TASKS])[0].startswith("position 0: 145 of 145")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_over_the_task_set_the_first_golden_tool_is_spread_over_the_shown_list(seed):
    shown = [(t, presented_order(t.id, t.available_tools, seed)) for t in TASKS]
    assert crowded_positions(shown) == []
    assert all(sorted(names) == sorted(t.available_tools) for t, names in shown)  # the same set, reordered


def test_the_order_is_stable_per_task_and_seed_and_differs_between_seeds():
    task = TASKS[0]
    assert presented_order(task.id, task.available_tools, 0) == presented_order(task.id, task.available_tools, 0)
    differ = sum(presented_order(t.id, t.available_tools, 0) != presented_order(t.id, t.available_tools, 1)
                 for t in TASKS)
    assert differ >= 0.9 * len(TASKS)


def test_an_episode_and_an_edge_export_show_the_shuffled_order(tmp_path):
    """The bench harness applies the order (the agent's tools, and the refusal's list of available tools), and EDGE's
    SFT export, made from replayed episodes of seed 0, shows every item's tools in the seed-0 order."""
    from edge.dataset.export import export_sft
    from tests.train.conftest import as_item, replay_gateway, replayed

    seen: dict[str, list[str]] = {}

    class Recorder(OracleAgent):
        async def run(self, context):
            seen[context.task.id] = [t.name for t in context.tools]
            refused = await context.call("no_such_tool", {})
            seen[context.task.id + "/refusal"] = refused.message.split("available: ")[1].split(", ")
            return await super().run(context)

    async def play():
        gateway = replay_gateway(tmp_path / "home", TASKS[0].bundle)
        try:
            return [await run_episode(t, Recorder(), gateway, seed=3) for t in TASKS[:5]]
        finally:
            await gateway.aclose()

    outcomes = asyncio.run(play())
    for task, outcome in zip(TASKS[:5], outcomes, strict=True):
        assert seen[task.id] == seen[task.id + "/refusal"] == presented_order(task.id, task.available_tools, 3)
        assert outcome.action.action < 1.0 or outcome.passed  # the extra refused call is scored, the episode runs

    items = [as_item(t) for t in TASKS]
    export_sft(items, tmp_path / "sft.jsonl", replays=replayed(items, tmp_path / "export-home"))
    rows = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {t.id: t for t in TASKS}
    shown = []
    for row in rows:
        names = [tool["function"]["name"] for tool in row["tools"]]
        task = next(by_id[i] for i in by_id if sorted(by_id[i].available_tools) == sorted(names)
                    and by_id[i].query == row["messages"][1]["content"])
        assert names == presented_order(task.id, task.available_tools, 0)
        shown.append((task, names))
    assert len(shown) == len(TASKS) and crowded_positions(shown) == []
