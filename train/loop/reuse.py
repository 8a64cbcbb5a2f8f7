"""Start a loop run from an earlier run's finished stages that the new settings would compute again unchanged.

    reused = reuse_stages(old_run, new_run, settings)     # e.g. ["dataset", "audit", "eval-listed", "eval-base"]

A run that changes only its training (more SFT steps, another learning rate) would rebuild the same dataset and play
the same base evaluation again: an hour on two cores. The stages before SFT read only some settings
(``STAGE_READS``); where every setting a stage reads is the same in both runs, its finished folder is copied
(checked first, as the loop checks a stage it skips) and its ``done.json`` says where it came from. A stage is
taken only with the stages it reads (``STAGE_NEEDS``: the audit reads the dataset); the evaluations read no dataset,
so a run with other data still takes the earlier base evaluations.
A dataset the loop synthesized is taken only when the EDGE code that made it is the code here (``edge_code``: a
hash of the ``edge`` and ``bench.taskset`` sources, recorded by the dataset stage): the same settings on changed
synthesis make other items, and a run must not train on data the code no longer makes.
An evaluation that differs only in its decoding guide is taken when none of its episodes wrote a call: a guide acts
only inside a call, so it never acted there (the base model answers in text).
A dataset built inside the earlier run's folder is pointed at its copy; the earlier run is never written to.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from recorder.cassette.bundle import file_sha256

from .settings import SETTINGS_FILE, LoopSettings, recorded_settings, settings_then
from .stages import DONE_FILE, LoopError, Stage

__all__ = ["STAGE_READS", "differing", "edge_code", "reuse_stages"]

_DATASET = ("dataset", "edge_graph", "edge_items", "edge_seed", "edge_tools", "edge_rounds", "edge_trials", "limits",
            "sft_slips")
STAGE_READS: dict[str, tuple[str, ...]] = {  # the settings each reusable stage's output depends on
    "dataset": _DATASET,
    "audit": (*_DATASET, "split"),
    "eval-listed": ("split", "split_tasks", "seeds", "limits"),
    "eval-base": ("model", "split", "split_tasks", "seeds", "limits", "max_new_tokens", "eval_batch",
                  "guide_tool_calls", "guide_tool_names", "eval_precision"),
}
STAGE_NEEDS: dict[str, tuple[str, ...]] = {"audit": ("dataset",)}  # what a stage reads of the stages before it
# decoding guides: they act only inside a call the model opens (``train.engines.trl.call_grammar``), so an evaluation
# in which the model opened no call is the same under any of them; guide_tool_names: the name-only guide, retired
_GUIDES = frozenset({"guide_tool_calls", "guide_tool_names"})


_EDGE_SOURCES = ("edge", "bench/taskset")  # what synthesis runs: Phase A, Phase B, the filter, the export, to_task


def edge_code() -> str:
    """A hash of the sources that synthesize a loop's dataset (sorted paths and bytes of their .py files)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted(p for folder in _EDGE_SOURCES for p in (root / folder).rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _settings_of(run: Path) -> dict[str, Any]:
    had = recorded_settings(run)
    if had is None:
        raise LoopError(f"--reuse {run}: not a loop run (no {SETTINGS_FILE})")
    return settings_then(had)


def differing(old: dict[str, Any], new: LoopSettings, stage: str) -> list[str]:
    """The settings ``stage`` reads whose values differ between the two runs."""
    wanted = new.model_dump(mode="json")
    return [k for k in STAGE_READS[stage] if old.get(k) != wanted.get(k)]


def reuse_stages(old_run: Path, new_run: Path, settings: LoopSettings,
                 log: Any = print) -> list[str]:
    """Copy ``old_run``'s finished stages that ``settings`` would compute unchanged into ``new_run`` (module doc);
    returns the names of those copied. Stages ``new_run`` has finished itself are left as they are.

    Raises:
        LoopError: ``old_run`` is not a loop run, or a stage it finished is corrupt.
    """
    old_run, new_run = Path(old_run).expanduser().resolve(), Path(new_run).expanduser().resolve()
    if old_run == new_run:
        raise LoopError(f"--reuse {old_run}: that is the run itself")
    old = _settings_of(old_run)
    taken: list[str] = []
    for name in STAGE_READS:
        if Stage(new_run, name).finished() is not None:
            continue  # the run's own
        missing = [need for need in STAGE_NEEDS.get(name, ()) if need not in taken]
        if missing:
            log(f"[{name}] not reused: it reads {', '.join(missing)}, which is not reused")
            continue
        record = Stage(old_run, name).finished()
        if record is None:
            log(f"[{name}] not finished in {old_run}: run here")
            continue
        changed = differing(old, settings, name)
        if name == "dataset" and not changed and settings.dataset is None and \
                record.get("figures", {}).get("edge_code") != edge_code():
            log(f"[{name}] not reused: the EDGE code that synthesized {old_run}'s differs from this checkout's")
            continue
        if changed and set(changed) <= _GUIDES and _no_call_written(old_run / name):
            log(f"[{name}] {', '.join(changed)} differ from {old_run}'s, but none of its episodes wrote a call: "
                "no guide acted there")
            changed = []
        if changed:
            log(f"[{name}] not reused: {', '.join(changed)} differ from {old_run}'s")
            continue
        _copy_stage(old_run, new_run, name)
        log(f"[{name}] reused from {old_run}")
        taken.append(name)
    return taken


def _no_call_written(stage_dir: Path) -> bool:
    """Whether every episode of an evaluation stage wrote no tool call (readable or not)."""
    from .evaluate import read_episodes

    rows = read_episodes(stage_dir / "episodes.jsonl")
    return bool(rows) and all(row.calls == 0 for row in rows)


def _copy_stage(old_run: Path, new_run: Path, name: str) -> None:
    target = new_run / name
    aside = new_run / f".{name}.copying"
    shutil.rmtree(aside, ignore_errors=True)
    if target.exists():  # the remains of a killed stage: the copy replaces them
        shutil.rmtree(target)
    shutil.copytree(old_run / name, aside)
    record = json.loads((aside / DONE_FILE).read_text(encoding="utf-8"))
    if name == "dataset":
        _point_at_copy(aside, record, old_run, new_run)
    for rel in record["files"]:
        path = aside / rel
        record["files"][rel] = {"bytes": path.stat().st_size, "sha256": file_sha256(path)}
    record["reused_from"] = str(old_run / name)
    (aside / DONE_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    aside.rename(target)


def _point_at_copy(stage_dir: Path, record: dict[str, Any], old_run: Path, new_run: Path) -> None:
    """A dataset built inside the old run's folder: its recorded folder becomes the copy's."""
    folder = Path(record["figures"]["folder"])
    if not folder.is_relative_to(old_run):
        return  # a --dataset given from outside: both runs read it where it is
    moved = str(new_run / folder.relative_to(old_run))
    record["figures"]["folder"] = moved
    described = json.loads((stage_dir / "dataset.json").read_text(encoding="utf-8"))
    described["folder"] = moved
    (stage_dir / "dataset.json").write_text(json.dumps(described, indent=1), encoding="utf-8")
