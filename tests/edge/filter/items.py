"""SynthItems built by hand from real KOPA-Bench tasks, for the filter and dataset tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from bench.task import Task, load_tasks
from edge.synth.item import Junction, JunctionType, SynthItem, TaskType

BENCH_FILE = Path(__file__).resolve().parents[3] / "bench" / "tasks" / "kopa-bench.jsonl"


@cache
def bench() -> dict[str, Task]:
    return {t.id: t for t in load_tasks(BENCH_FILE)}


def task_like(base: str, **changes: Any) -> Task:
    """Bench task ``base`` with ``changes`` applied and validated again (a Task is frozen and checks itself)."""
    return Task.model_validate({**bench()[base].model_dump(mode="json"), **changes})


def wrap(task: Task, *, task_type: TaskType = TaskType.SEQ, junctions: tuple[Junction, ...] = (),
         call_records: tuple[int, ...] | None = None, recipe: dict[str, Any] | None = None) -> SynthItem:
    return SynthItem(task=task, task_type=task_type, junctions=junctions, recipe=recipe or {},
                     call_records=call_records if call_records is not None else (1,) * len(task.golden_actions),
                     seed=0, graph_run="test-run.jsonl", writer="rule:test")


def junction(source: str, target: str, field: str, param: str, n: int) -> Junction:
    kind = JunctionType.SEQ if n == 1 else JunctionType.FAN if n <= 5 else JunctionType.DRV
    return Junction(source=source, target=target, field=field, param=param, cardinality=n, type=kind)
