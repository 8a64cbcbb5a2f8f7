"""Fixtures for the training tests: EDGE's verl parquet made from shipped bench tasks, replayed from cassettes/.

The parquet is written by EDGE Phase B's own writer (``edge.dataset.export.export_verl``) over bench tasks wrapped
as EDGE items, after their golden trajectories replay (strict replay of the checked-in bundle, empty home), so the
rows are exactly what training reads. ``items.jsonl`` beside it holds the whole items: the export's
``extra_info`` names each row's item but not its whole task (system state, call budget), which a rollout needs.
"""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

import pytest

from bench.runner import open_bench_gateway
from bench.task import Task, load_tasks
from bench.taskset.build import DEFAULT_TASKS
from edge.dataset.export import export_verl, replay_items
from edge.synth.item import SynthItem, TaskType

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
# a chain with a state answer (trf-001), parallel steps with number answers (fin-001, fin-019), state only (edu-029)
IDS = ("trf-001", "fin-001", "fin-019", "edu-029")


@cache
def bench_tasks() -> dict[str, Task]:
    return {t.id: t for t in load_tasks(DEFAULT_TASKS)}


def as_item(task: Task) -> SynthItem:
    return SynthItem(task=task, task_type=TaskType.MIXED, recipe={}, call_records=(1,) * len(task.golden_actions),
                     seed=0, graph_run="kopa-bench", writer="rule:bench")


def replay_gateway(home: Path, bundle: str):
    return open_bench_gateway(bundle, cassettes=CASSETTES, home=home)


def replayed(items: list[SynthItem], home: Path) -> dict:
    """The items' golden trajectories replayed from their bundle (what EDGE's export needs)."""
    async def replay():
        gateway = replay_gateway(home, items[0].task.bundle)
        try:
            return await replay_items(items, gateway)
        finally:
            await gateway.aclose()

    return asyncio.run(replay())


@pytest.fixture(scope="session")
def edge_dataset(tmp_path_factory) -> Path:
    """A dataset folder as `kopa train grpo --dataset DIR` takes it: train.parquet and items.jsonl."""
    folder = tmp_path_factory.mktemp("edge-dataset")
    items = [as_item(bench_tasks()[i]) for i in IDS]
    export_verl(items, folder / "train.parquet", replays=replayed(items, folder / "home"))
    (folder / "items.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return folder
