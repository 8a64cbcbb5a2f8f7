"""Named, fixed evaluation splits of KOPA-Bench: a file in the repository, checked against the task set it names.

    from bench.splits import load_split
    split = load_split("eval-v1")             # bench/tasks/splits/eval-v1.json, or any path to a split file
    split.name, split.ids, split.tasks        # tasks: bench.task.Task from the task file, in the split's order

A split file is one JSON object: ``name``, ``description``, ``task_file`` (relative to the split file), how the
tasks were chosen (``selection``), the count per domain, ``content_sha256`` (over the chosen tasks' content) and,
per task, its id, the SHA-256 of its content and a short digest of each field. Loading reads the task file again
and refuses a split whose tasks are gone or changed, naming each task and the fields that changed: a score on
"eval-v1" then always means the same tasks, and an edit of the task set cannot slip under a published figure.

A split is made, not edited by hand: ``SplitRecipe.make`` picks, per domain, the tasks ranked first by
``sha256(salt, id)`` (a seeded stratified pick: the count per domain proportional to the task set, largest
remainders first, at least ``min_per_domain``), and ``write_split`` writes the file byte for byte the same every
time. ``python -m bench.splits eval-v1`` regenerates a registered split (``SPLITS``); a test checks the committed
file is exactly what its recipe makes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.task import DOMAINS, Task, TaskLoadError, load_tasks

__all__ = ["SPLITS", "SPLITS_DIR", "Split", "SplitChangedError", "SplitError", "SplitRecipe", "load_split",
           "task_digest", "write_split"]

SPLITS_DIR = Path(__file__).resolve().parent / "tasks" / "splits"
FORMAT = 1


class SplitError(ValueError):
    """A split cannot be loaded: unknown name, unreadable or malformed file, or a task file it cannot use."""


class SplitChangedError(SplitError):
    """The task file no longer holds the split's tasks as they were: ``missing`` ids, ``changed`` {id: fields}."""

    def __init__(self, message: str, *, missing: Sequence[str], changed: dict[str, list[str]]):
        super().__init__(message)
        self.missing, self.changed = list(missing), changed


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def task_digest(task: Task) -> tuple[str, dict[str, str]]:
    """(SHA-256 of the task's content, a 12-hex-digit digest per field): what a split pins of each task."""
    data = task.model_dump(mode="json")
    return (hashlib.sha256(_canonical(data)).hexdigest(),
            {name: hashlib.sha256(_canonical(value)).hexdigest()[:12] for name, value in data.items()})


def _content_sha256(digests: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


@dataclass(frozen=True)
class Split:
    """A loaded split: its tasks, checked against what the split file pins."""

    name: str
    description: str
    path: Path  # the split file
    task_file: Path  # the task file its tasks come from
    tasks: tuple[Task, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks)

    def domain_counts(self) -> dict[str, int]:
        """Tasks per domain, in ``bench.task.DOMAINS`` order."""
        counts = Counter(t.domain for t in self.tasks)
        return {d: counts[d] for d in DOMAINS if counts[d]}


# ---------------------------------------------------------------------------------------------- making


@dataclass(frozen=True)
class SplitRecipe:
    """How a split is chosen from a task file (module doc); ``make`` is deterministic."""

    name: str
    task_file: Path
    size: int
    description: str
    min_per_domain: int = 4
    salt: str = ""  # the rank seed; the split's name when empty

    def quotas(self, tasks: Sequence[Task]) -> dict[str, int]:
        """Tasks to pick per domain: proportional to the task set, largest remainders first, at least the minimum.

        Raises:
            SplitError: a domain has fewer tasks than its quota, or the minimums alone exceed ``size``.
        """
        counts = Counter(t.domain for t in tasks)
        domains = [d for d in DOMAINS if counts[d]]
        exact = {d: self.size * counts[d] / len(tasks) for d in domains}
        quota = {d: max(self.min_per_domain, math.floor(exact[d])) for d in domains}
        if sum(quota.values()) > self.size:
            raise SplitError(f"split {self.name!r}: {self.min_per_domain} per domain over {len(domains)} domains "
                             f"is more than its size {self.size}; raise the size or lower min_per_domain")
        by_remainder = sorted(domains, key=lambda d: (-(exact[d] - quota[d]), DOMAINS.index(d)))
        for d in by_remainder[:self.size - sum(quota.values())]:
            quota[d] += 1
        if short := {d: (quota[d], counts[d]) for d in domains if quota[d] > counts[d]}:
            raise SplitError(f"split {self.name!r}: domains with fewer tasks than their quota (quota, tasks): {short}")
        return quota

    def make(self) -> dict[str, Any]:
        """The split file's content (a JSON object) for the current task file."""
        tasks = load_tasks(self.task_file)
        salt = self.salt or self.name

        def rank(task: Task) -> str:
            return hashlib.sha256(f"split\x00{salt}\x00{task.id}".encode()).hexdigest()

        chosen: set[str] = set()
        quota = self.quotas(tasks)
        for domain, k in quota.items():
            chosen |= {t.id for t in sorted((t for t in tasks if t.domain == domain), key=rank)[:k]}
        picked = [t for t in tasks if t.id in chosen]  # in the task file's order
        digests = [task_digest(t) for t in picked]
        return {
            "format": FORMAT,
            "name": self.name,
            "description": self.description,
            "task_file": os.path.relpath(self.task_file, SPLITS_DIR),
            "selection": {"method": "per domain, the tasks ranked first by sha256('split', salt, id); counts "
                                    "proportional to the task set (largest remainders), at least min_per_domain",
                          "salt": salt, "size": self.size, "min_per_domain": self.min_per_domain},
            "domains": quota,
            "content_sha256": _content_sha256([full for full, _ in digests]),
            "tasks": [{"id": t.id, "sha256": full, "fields": fields} for t, (full, fields) in zip(picked, digests)],
        }


def _dumps(data: dict[str, Any]) -> str:
    """The split file's text: two-space indent, one line per task, so a diff shows which task moved."""
    head = {k: v for k, v in data.items() if k != "tasks"}
    text = json.dumps(head, ensure_ascii=False, indent=2)[:-2]
    rows = ",\n".join("    " + json.dumps(row, ensure_ascii=False) for row in data["tasks"])
    return f'{text},\n  "tasks": [\n{rows}\n  ]\n}}\n'


def write_split(recipe: SplitRecipe, folder: Path = SPLITS_DIR) -> Path:
    """Make ``recipe``'s split and write it to ``folder/<name>.json`` (over an earlier file of that name)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{recipe.name}.json"
    path.write_text(_dumps(recipe.make()), encoding="utf-8")
    return path


SPLITS: dict[str, SplitRecipe] = {recipe.name: recipe for recipe in (
    SplitRecipe(
        name="eval-v1", task_file=SPLITS_DIR.parent / "kopa-bench.jsonl", size=36,
        description="A fixed quarter of KOPA-Bench (task set v2) held out for evaluating trained models: every "
                    "domain, in proportion. EDGE training data is audited against it "
                    "(edge.filter.split_audit); figures on it are comparable across runs only while it loads."),
)}


# ---------------------------------------------------------------------------------------------- loading


def _split_path(name_or_path: str | Path) -> Path:
    if isinstance(name_or_path, Path) or name_or_path.endswith(".json") or os.sep in name_or_path:
        path = Path(name_or_path)
        if not path.is_file():
            raise SplitError(f"split file {path} not found")
        return path
    path = SPLITS_DIR / f"{name_or_path}.json"
    if not path.is_file():
        known = sorted(p.stem for p in SPLITS_DIR.glob("*.json"))
        raise SplitError(f"unknown split {name_or_path!r}; known: {', '.join(known) or 'none'} "
                         f"(in {SPLITS_DIR}), or give the path to a split file")
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SplitError(f"{path}: cannot read the split file: {exc}") from exc
    need = ("name", "task_file", "content_sha256", "tasks")
    if not isinstance(data, dict):
        raise SplitError(f"{path}: not a split file (a JSON object with {', '.join(need)})")
    if missing := [k for k in need if k not in data]:
        raise SplitError(f"{path}: not a split file; it lacks {', '.join(missing)}")
    if data.get("format") != FORMAT:
        raise SplitError(f"{path}: split format {data.get('format')!r}; this version reads format {FORMAT}")
    return data


def load_split(name_or_path: str | Path) -> Split:
    """The split registered under ``name`` in ``bench/tasks/splits/``, or the split file at a path.

    Raises:
        SplitError: unknown name (the message lists the known ones), unreadable split or task file.
        SplitChangedError: a task of the split is missing from the task file, or its content changed since the
            split was made (the message names each task and its changed fields, and how to proceed).
    """
    path = _split_path(name_or_path)
    data = _read(path)
    task_file = (path.parent / data["task_file"]).resolve()
    try:
        by_id = {t.id: t for t in load_tasks(task_file)}
    except TaskLoadError as exc:
        raise SplitError(f"split {data['name']!r} ({path}): its task file cannot be loaded: {exc}") from exc
    rows = data["tasks"]
    missing = [row["id"] for row in rows if row["id"] not in by_id]
    changed: dict[str, list[str]] = {}
    for row in rows:
        if row["id"] in by_id:
            full, fields = task_digest(by_id[row["id"]])
            if full != row["sha256"]:
                pinned = row.get("fields", {})
                changed[row["id"]] = sorted({*fields, *pinned} - {k for k in fields if pinned.get(k) == fields[k]})
    if missing or changed:
        lines = [f"split {data['name']!r} ({path}) no longer matches its task file {task_file}:"]
        if missing:
            lines.append(f"  {len(missing)} task(s) missing: {', '.join(missing)}")
        lines += [f"  {tid} changed: {', '.join(fields)}" for tid, fields in changed.items()]
        lines.append("  Restore those tasks, or make a new split (a new name: figures on the old one stay "
                     "comparable only with each other).")
        raise SplitChangedError("\n".join(lines), missing=missing, changed=changed)
    tasks = tuple(by_id[row["id"]] for row in rows)
    content = _content_sha256([task_digest(t)[0] for t in tasks])
    if content != data["content_sha256"]:  # the per-task digests agree but the file's own sum does not: edited
        raise SplitError(f"split {data['name']!r} ({path}): content_sha256 {data['content_sha256'][:12]}… does "
                         f"not match its tasks ({content[:12]}…); the split file was edited by hand")
    return Split(name=data["name"], description=data.get("description", ""), path=path, task_file=task_file,
                 tasks=tasks)


def _main(argv: Sequence[str]) -> int:
    if not argv or any(name not in SPLITS for name in argv):
        print(f"usage: python -m bench.splits NAME...  (registered: {', '.join(SPLITS)})", file=sys.stderr)
        return 2
    for name in argv:
        print(write_split(SPLITS[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
