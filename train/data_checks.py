"""What any engine checks before it trains: the files exist, the model is a local checkpoint, every dataset row
can be played.

    problems = path_problems([("data.train_files", "out/edge/train.parquet")])   # [] when every path exists
    problems += model_problems(Path("~/.kopa/models/tiny-qwen3"))
    problems += dataset_problems(Path("out/edge/train.parquet"), dataset_dir=Path("out/edge"),
                                 cassettes=Path("cassettes"))

Each function returns one line per problem ([] when there is none), naming the setting, the value and the fix;
none raises for bad data. ``dataset_problems`` reads the rows' ``extra_info`` (a dict, or the JSON string EDGE's
export writes): every row's task must be found (``train.tasks``: in the row, or in the dataset folder's task
files, ``dataset_tasks_files``), and every task's cassette bundle must be in the cassettes folder (a rollout
replays it strictly).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .tasks import TaskIndex, TaskNotFound, decode_json

__all__ = ["dataset_problems", "dataset_tasks_files", "model_problems", "path_problems"]


def dataset_tasks_files(dataset_dir: Path) -> list[Path]:
    """Files in the dataset folder that hold whole tasks (for rows that name their item only)."""
    return [p for p in (dataset_dir / "kept.jsonl", dataset_dir / "items.jsonl", dataset_dir / "tasks.jsonl")
            if p.is_file()]


def path_problems(named: Iterable[tuple[str, Any]]) -> list[str]:
    """``(setting, path or list of paths)`` pairs whose paths do not exist; empty values are skipped."""
    problems = []
    for key, value in named:
        for one in (value if isinstance(value, (list, tuple)) or type(value).__name__ == "ListConfig" else [value]):
            if one and not Path(str(one)).expanduser().exists():
                problems.append(f"{key}: {one} does not exist")
    return problems


def model_problems(model: Any) -> list[str]:
    """``model`` must be a local Hugging Face checkpoint folder (nothing is downloaded from a hub)."""
    model_dir = Path(str(model)).expanduser()
    if not model_dir.is_dir():
        return [f"model path {model} is not a folder; give a local Hugging Face checkpoint (--set model=DIR): "
                "nothing is downloaded from a hub"]
    if not (model_dir / "config.json").is_file():
        return [f"model path {model} has no config.json; it is not a Hugging Face checkpoint folder"]
    return []


def dataset_problems(train: Path, *, dataset_dir: Path, cassettes: Path,
                     setting: str = "data.train_files") -> list[str]:
    """Rows of the parquet ``train`` whose task cannot be found or whose bundle is not in ``cassettes``.

    ``setting`` names the file in the messages (the engine's key for it). A missing file is no problem here:
    ``path_problems`` reports it.
    """
    import pyarrow.parquet as pq

    from recorder import CassetteStore

    train = Path(train).expanduser()
    if not train.is_file():
        return []
    try:
        rows = pq.read_table(train, columns=["extra_info"]).to_pylist()
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a problem to show, not a crash
        return [f"{setting}: {train} cannot be read as parquet with an extra_info column: {exc}"]
    problems = []
    store = CassetteStore(cassettes)
    index = TaskIndex.from_files(dataset_tasks_files(Path(dataset_dir)))
    bundles: dict[str, str | None] = {}
    missing_tasks: list[str] = []
    for row in rows:
        info = decode_json(row.get("extra_info")) or {}
        try:
            task = index.task_for(info)
        except TaskNotFound as exc:
            missing_tasks.append(str(exc))
            bundle = info.get("bundle")
        else:
            bundle = task.bundle
        if bundle and bundle not in bundles:
            try:
                store.resolve(bundle)
                bundles[bundle] = None
            except Exception as exc:  # noqa: BLE001 - the recorder's own message names what is missing
                bundles[bundle] = str(exc)
    problems += [f"bundle {b} is not in {cassettes}: {why}" for b, why in bundles.items() if why]
    if missing_tasks:
        problems.append(f"{len(missing_tasks)} of {len(rows)} row(s) have no task to play; first: {missing_tasks[0]}")
    if not rows:
        problems.append(f"{setting}: {train} has no rows")
    return problems
