"""A dataset row -> the bench ``Task`` its rollout plays.

    index = TaskIndex.from_files(["bench/tasks/kopa-bench.jsonl", "out/items.jsonl"])
    task = index.task_for(row_extra_info)

A row's ``extra_info`` (a dict, or the JSON string EDGE's export writes) names its item (``item_id``; ``task_id``
or ``id`` also work). The whole task is needed to play it (system state, platforms, call budget), and is found:

1. in ``extra_info["task"]`` (a task object or its JSON), when the export puts it there;
2. else in the index, by item id: task files (``.jsonl``/``.json`` as ``bench.task.load_tasks`` reads them) or
   EDGE item files (JSON lines with the task under ``"task"``, as ``edge.synth`` writes them).

A row whose task cannot be found is an error naming the row and where it looked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bench.task import Task, TaskLoadError, load_tasks

__all__ = ["TaskIndex", "TaskNotFound", "decode_json", "item_id_of"]


class TaskNotFound(LookupError):
    """A row names an item that neither the row nor the task index holds."""


def decode_json(value: Any) -> Any:
    """``value`` decoded when it is a JSON string (EDGE writes ``extra_info`` so), else as it is."""
    if isinstance(value, (str, bytes)):
        return json.loads(value)
    return value


def item_id_of(extra_info: Mapping[str, Any]) -> str | None:
    for key in ("item_id", "task_id", "id"):
        if isinstance(extra_info.get(key), str):
            return extra_info[key]
    return None


def _read_any(path: Path) -> list[Task]:
    """Tasks of a task file, or of an EDGE items file (objects with the task under ``"task"``)."""
    first = next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "")
    if path.suffix == ".jsonl" and first and '"task"' in first and isinstance(json.loads(first).get("task"), dict):
        tasks = []
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    tasks.append(Task.model_validate(json.loads(line)["task"]))
                except Exception as exc:  # noqa: BLE001 - named and re-raised as the loader's error
                    raise TaskLoadError(path, [f"{path.name}:{lineno}: {exc}"]) from exc
        return tasks
    return load_tasks(path)


class TaskIndex:
    """Tasks by id, from files; rows that carry their own task need none."""

    def __init__(self, tasks: Iterable[Task] = (), sources: Iterable[str] = ()):
        self.tasks = {t.id: t for t in tasks}
        self.sources = list(sources)

    @classmethod
    def from_files(cls, paths: Iterable[Path | str]) -> TaskIndex:
        """Raises ``bench.task.TaskLoadError`` for a missing or bad file."""
        tasks: list[Task] = []
        sources = []
        for path in map(Path, paths):
            tasks += _read_any(path)
            sources.append(str(path))
        return cls(tasks, sources)

    def task_for(self, extra_info: Any) -> Task:
        """The task a row plays (module doc).

        Raises:
            TaskNotFound: the row names no item, or one neither it nor the index holds.
            pydantic.ValidationError: the row's own task is not a valid task.
        """
        info = decode_json(extra_info) or {}
        if not isinstance(info, Mapping):
            raise TaskNotFound(f"extra_info is a {type(info).__name__}, not an object")
        if info.get("task"):
            return Task.model_validate(decode_json(info["task"]))
        item = item_id_of(info)
        if item is None:
            raise TaskNotFound(f"the row's extra_info names no item (item_id) and holds no task; keys: {sorted(info)}")
        if item not in self.tasks:
            where = ", ".join(self.sources) or "no task files (set kopa.tasks_files in the agent loop config)"
            raise TaskNotFound(f"item {item!r} is not in the row and not in the task index ({where})")
        return self.tasks[item]
