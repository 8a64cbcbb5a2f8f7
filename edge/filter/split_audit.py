"""Is a training set clean of a held-out eval split? Every (split task, training item) pair that leaks, named.

    from bench.splits import load_split
    from edge.filter.split_audit import audit_split
    result = audit_split(load_split("eval-v1"), "runs/edge/dataset")   # a dataset folder, items.jsonl or SynthItems
    result.clean          # False when any training item leaks a split task
    result.hits           # (split task, item, kind, score), one per leak
    print(result.table())  # one row per split task

``ContaminationAudit`` screens items against the whole bench while synthesis runs; this checks a finished training
set against the split a model will be scored on, per split task, with the same measures and thresholds:

* ``verbatim`` — an item's query is the task's query (whitespace normalised);
* ``ngram`` — character-trigram Jaccard of the queries at least ``NGRAM_DROP``;
* ``embedding`` — only with an embedder (MiniLM, slow to load): cosine at least ``EMBED_DROP`` together with a
  trigram Jaccard at least ``NGRAM_WITH_EMBED`` (the model alone over-rates Korean sentences of one shape);
* ``trajectory`` — an item's golden calls (tools and arguments, in order) are the task's;
* ``platform`` — only with ``held_out`` (the platforms synthesis held out, Table 14): an item calls a held-out
  platform the task uses. ``TaskAudit.held_out`` names the task's held-out platforms, so the split's held-out
  tasks (those a model is scored on without having seen their platforms) are listed.

Every leaking pair is reported, not only the closest, so a copy can be traced to each item that carries it.

``tool_coverage`` is the audit's other side: not what the training data must not hold, but what it must. A model
learns to call a tool from examples that call it; ``coverage.table()`` says how many of the split's golden actions
use a tool that some training item calls, and names the tools no item calls (the golden actions a tuned model
has never seen an example of).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bench.splits import Split
from bench.task import Task
from edge.dataset.items_io import read_items
from edge.embedding import Embedder
from edge.synth.item import SynthItem

from .contamination import EMBED_DROP, NGRAM_DROP, NGRAM_WITH_EMBED
from .ngrams import char_ngrams, jaccard, normalize

__all__ = ["SplitAuditResult", "SplitHit", "TaskAudit", "ToolCoverage", "audit_split", "tool_coverage"]

HitKind = Literal["verbatim", "ngram", "embedding", "trajectory", "platform"]
ITEMS_FILE = "items.jsonl"


def _trajectory(task: Task) -> tuple[tuple[str, str], ...]:
    """The golden calls as compared: tool and arguments (placeholders as written), in order."""
    return tuple((a.tool, json.dumps(a.args, sort_keys=True, ensure_ascii=False)) for a in task.golden_actions)


@dataclass(frozen=True)
class SplitHit:
    """One training item that leaks one split task, and how."""

    task_id: str
    item_id: str
    kind: HitKind
    score: float | None = None  # the Jaccard (ngram) or cosine (embedding); None for exact matches

    def __str__(self) -> str:
        if self.kind == "verbatim":
            how = "has its query verbatim"
        elif self.kind == "trajectory":
            how = "has its golden trajectory (tools and arguments)"
        elif self.kind == "platform":
            how = "calls a platform held out of training that the task uses"
        elif self.kind == "ngram":
            how = f"has a near-duplicate query (character-trigram Jaccard {self.score or 0:.2f} ≥ {NGRAM_DROP})"
        else:
            how = (f"has a near-duplicate query (MiniLM cosine {self.score or 0:.3f} ≥ {EMBED_DROP} with trigram "
                   f"Jaccard ≥ {NGRAM_WITH_EMBED})")
        return f"split task {self.task_id}: training item {self.item_id} {how}"


@dataclass(frozen=True)
class TaskAudit:
    """One split task against the whole training set: its closest item by n-gram (and cosine), and its hits."""

    task_id: str
    domain: str
    max_ngram: float
    ngram_item: str | None
    max_cosine: float | None  # None without an embedder
    cosine_item: str | None
    hits: tuple[SplitHit, ...]
    held_out: tuple[str, ...] = ()  # the task's platforms that synthesis held out

    @property
    def clean(self) -> bool:
        return not self.hits


@dataclass(frozen=True)
class SplitAuditResult:
    """The audit of a training set against a split: one ``TaskAudit`` per split task, in the split's order."""

    split: str
    n_items: int
    tasks: tuple[TaskAudit, ...]
    embedding: bool  # whether the embedding check ran
    held_out: tuple[str, ...] = ()  # the platforms synthesis held out (``audit_split``'s argument)

    @property
    def held_out_tasks(self) -> tuple[str, ...]:
        """The split tasks that use a held-out platform."""
        return tuple(t.task_id for t in self.tasks if t.held_out)

    @property
    def hits(self) -> tuple[SplitHit, ...]:
        """Every offending (split task, training item) pair."""
        return tuple(hit for task in self.tasks for hit in task.hits)

    @property
    def clean(self) -> bool:
        return not self.hits

    def table(self) -> str:
        """One row per split task: its closest item, the leaks found, and a verdict line."""
        cos_head = "  cosine" if self.embedding else ""
        lines = [f"split {self.split!r} against {self.n_items} training items",
                 f"{'task':<10} {'domain':<10} {'n-gram':>6}{cos_head}  leaks"]
        for t in self.tasks:
            cos = "" if not self.embedding else f"  {t.max_cosine:6.3f}" if t.max_cosine is not None else "     n/a"
            leaks = "; ".join(f"{h.kind}: {h.item_id}" for h in t.hits) or "-"
            lines.append(f"{t.task_id:<10} {t.domain:<10} {t.max_ngram:6.2f}{cos}  {leaks}")
        leaked = sum(not t.clean for t in self.tasks)
        if self.held_out:
            lines.append(f"held out of training: {', '.join(self.held_out)} ({len(self.held_out_tasks)} split tasks "
                         "use them)")
        lines.append("clean: no training item leaks a split task" if self.clean else
                     f"NOT CLEAN: {leaked} of {len(self.tasks)} split tasks leaked by {len(self.hits)} "
                     f"(task, item) pair(s)")
        return "\n".join(lines)


def _items(items: Sequence[SynthItem] | Path | str) -> list[SynthItem]:
    if isinstance(items, (str, Path)):
        path = Path(items)
        return read_items(path / ITEMS_FILE if path.is_dir() else path)
    return list(items)


def audit_split(split: Split, items: Sequence[SynthItem] | Path | str, *,
                embedder: Embedder | None = None, held_out: Sequence[str] = ()) -> SplitAuditResult:
    """Audit training ``items`` (SynthItems, an exported dataset folder or its items.jsonl) against ``split``.

    ``embedder``: also run the embedding check (module doc); without it the audit needs no model and is quick.
    ``held_out``: platforms synthesis held out; an item calling one that a split task uses leaks that task.

    Raises:
        edge.dataset.items_io.DatasetFileError: the folder has no items.jsonl, or a line is not a SynthItem.
    """
    train = _items(items)
    grams = [char_ngrams(i.task.query) for i in train]
    queries = [normalize(i.task.query) for i in train]
    trajectories = [_trajectory(i.task) for i in train]
    held = frozenset(held_out)
    calls_held = [set(i.task.platforms) & held for i in train]  # an item's platforms are those it calls
    cosines = None
    if embedder is not None and train and split.tasks:
        cosines = embedder.embed([t.query for t in split.tasks]) @ embedder.embed([i.task.query for i in train]).T
    audits = []
    for row, task in enumerate(split.tasks):
        task_grams, query, trajectory = char_ngrams(task.query), normalize(task.query), _trajectory(task)
        scores = [jaccard(task_grams, g) for g in grams]
        hits: list[SplitHit] = []
        for k, item in enumerate(train):
            item_id = item.task.id
            if queries[k] == query:
                hits.append(SplitHit(task.id, item_id, "verbatim"))
            elif scores[k] >= NGRAM_DROP:
                hits.append(SplitHit(task.id, item_id, "ngram", scores[k]))
            elif (cosines is not None and float(cosines[row][k]) >= EMBED_DROP
                  and scores[k] >= NGRAM_WITH_EMBED):
                hits.append(SplitHit(task.id, item_id, "embedding", float(cosines[row][k])))
            if trajectories[k] == trajectory:
                hits.append(SplitHit(task.id, item_id, "trajectory"))
            if calls_held[k] & set(task.platforms):
                hits.append(SplitHit(task.id, item_id, "platform"))
        best = max(range(len(train)), key=scores.__getitem__, default=None)  # ties: the item listed first
        cos_best = None if cosines is None else int(cosines[row].argmax())
        audits.append(TaskAudit(
            task_id=task.id, domain=task.domain, max_ngram=scores[best] if best is not None else 0.0,
            ngram_item=train[best].task.id if best is not None else None,
            max_cosine=float(cosines[row][cos_best]) if cos_best is not None else None,
            cosine_item=train[cos_best].task.id if cos_best is not None else None, hits=tuple(hits),
            held_out=tuple(sorted(set(task.platforms) & held))))
    return SplitAuditResult(split=split.name, n_items=len(train), tasks=tuple(audits), embedding=cosines is not None,
                            held_out=tuple(sorted(held)))


@dataclass(frozen=True)
class ToolCoverage:
    """How much of a split's golden actions the training data shows a model: per tool, golden uses and item calls."""

    split: str
    n_items: int
    golden: dict[str, int]  # tool → golden actions of the split that call it
    trained: dict[str, int]  # tool → golden calls of training items that call it (only the split's tools)

    @property
    def actions_covered(self) -> int:
        return sum(n for tool, n in self.golden.items() if self.trained.get(tool))

    @property
    def actions(self) -> int:
        return sum(self.golden.values())

    @property
    def tools_covered(self) -> int:
        return sum(1 for tool in self.golden if self.trained.get(tool))

    @property
    def missing(self) -> list[str]:
        """The split's tools no training item calls, most golden actions first."""
        return sorted((t for t in self.golden if not self.trained.get(t)), key=lambda t: (-self.golden[t], t))

    def figures(self) -> dict[str, object]:
        return {"golden_actions": self.actions, "golden_actions_covered": self.actions_covered,
                "tools": len(self.golden), "tools_covered": self.tools_covered,
                "missing": {t: self.golden[t] for t in self.missing}}

    def table(self) -> str:
        share = self.actions_covered / self.actions if self.actions else 0.0
        lines = [f"tool coverage of split {self.split!r} by {self.n_items} training items: "
                 f"{self.actions_covered} of {self.actions} golden actions ({100 * share:.0f} %) call a tool the "
                 f"training data calls; {self.tools_covered} of {len(self.golden)} tools"]
        if self.missing:
            lines.append("never called in training (golden actions): "
                         + ", ".join(f"{t} ({self.golden[t]})" for t in self.missing))
        return "\n".join(lines)


def tool_coverage(split: Split, items: Sequence[SynthItem] | Path | str, *,
                  tasks: Sequence[Task] | None = None) -> ToolCoverage:
    """Which of ``split``'s golden tools the training ``items`` call (``audit_split``'s inputs); ``tasks``: only
    these of the split's tasks (those a run evaluates)."""
    train = _items(items)
    golden = Counter(a.tool for task in (split.tasks if tasks is None else tasks) for a in task.golden_actions)
    trained = Counter(a.tool for item in train for a in item.task.golden_actions if a.tool in golden)
    return ToolCoverage(split=split.name, n_items=len(train), golden=dict(sorted(golden.items())),
                        trained=dict(sorted(trained.items())))
