"""Phase B's item producer: typed trajectories over G*, executed, asked in Korean, pinned to a bundle.

    gateway = open_recording_gateway(home, cassettes, "edge-synth", scale=..., stamp=RECORDED_AT)
    items, abandoned = await synthesize(store, gateway, n=200, seed=0)
    # gateway.commit() was called: every item's task is pinned to the bundle version holding its calls

The n items are split over Table 12's classes by largest remainder (``quotas``). Attempt a (seeded by
(seed, a)) targets the class furthest below its quota: a sequential walk steered toward SEQ, FAN, DRV or
MIXED, or a SEM/CMP/COND template. What actually ran decides the item's class; an item is kept while its
class has room. A class that keeps failing (``GIVE_UP`` attempts in a row) is given up, so a graph that
cannot make it does not stall the run. ``abandoned`` counts every reason an attempt was dropped.

Everything runs sequentially with seeded choices over sorted lists, so the same run file, world and seed
give the same calls, the same recording and byte-identical items.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.task import parse_task
from bench.taskset.build import to_task
from bench.taskset.draft import Draft, DraftError
from edge.graph.store import GraphStore

from .answer import remap
from .execute import Abandon, Executed, Trace, run_chain, run_comparison, run_conditional, run_semantic
from .item import SynthItem, TaskType
from .realise import leaks, realise
from .walk import LiveGraph

__all__ = ["GIVE_UP", "RECORDED_AT", "TABLE_12", "SynthDraft", "quotas", "synthesize"]

TABLE_12: dict[TaskType, float] = {TaskType.MIXED: 36.7, TaskType.DRV: 19.7, TaskType.SEM: 17.0, TaskType.SEQ: 12.1,
                                   TaskType.CMP: 9.0, TaskType.COND: 2.8, TaskType.FAN: 2.7}
# Every synthesis call is recorded from the deterministic in-process sandbox with this recording time (the world's
# "today") and zero timings, so the same graph and seed record the same bundle version: byte-identical items.
RECORDED_AT = "2025-06-30T00:00:00.000Z"
GIVE_UP = 40  # attempts in a row without an item of a class before that class is given up
_WALK_EDGES = {TaskType.SEQ: (1, 3), TaskType.FAN: (1, 1), TaskType.DRV: (1, 3), TaskType.MIXED: (2, 4)}

Writer = Callable[[Trace, Any, np.random.Generator], tuple[str, str]]  # → (query, writer id)


@dataclass
class SynthDraft(Draft):
    """A Draft that also keeps how many records each golden call returned (``SynthItem.call_records``)."""

    page_records: list[int] = field(default_factory=list)

    async def call(self, tool: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        result = await super().call(tool, args, **kw)
        self.page_records.append(len(result.records))
        return result


def quotas(n: int, mix: Mapping[TaskType, float] = TABLE_12) -> dict[TaskType, int]:
    """n split over the classes by their shares, largest remainder first (ties in ``mix`` order)."""
    total = sum(mix.values())
    exact = {t: n * share / total for t, share in mix.items()}
    out = {t: int(v) for t, v in exact.items()}
    order = sorted(mix, key=lambda t: (-(exact[t] - out[t]), list(mix).index(t)))
    for t in order[:n - sum(out.values())]:
        out[t] += 1
    return out


def rule_writer(trace: Trace, catalog: Any, rng: np.random.Generator) -> tuple[str, str]:
    query, phrasing = realise(trace, catalog, rng)
    return query, f"rule:{phrasing}"


async def _attempt(draft: SynthDraft, graph: LiveGraph, want: TaskType, rng: np.random.Generator) -> Executed:
    if want is TaskType.SEM:
        return await run_semantic(draft, graph, rng)
    if want is TaskType.CMP:
        return await run_comparison(draft, graph, rng)
    if want is TaskType.COND:
        return await run_conditional(draft, graph, rng)
    low, high = _WALK_EDGES[want]
    walk = graph.walk(rng, edges=int(rng.integers(low, high + 1)))
    if walk is None:
        raise Abandon("no start tool with known inputs and a live edge")
    return await run_chain(draft, walk, want=want, rng=rng)


def _target(quota: Mapping[TaskType, int], got: Counter[TaskType], given_up: set[TaskType]) -> TaskType | None:
    open_ = [t for t in quota if got[t] < quota[t] and t not in given_up]
    if not open_:
        return None
    return max(open_, key=lambda t: ((quota[t] - got[t]) / quota[t], -list(quota).index(t)))


async def synthesize(store: GraphStore, gateway: Any, n: int, seed: int, *,
                     type_mix: Mapping[TaskType, float] = TABLE_12, writer: Writer | None = None,
                     max_attempts: int | None = None) -> tuple[list[SynthItem], Counter[str]]:
    """Up to ``n`` items from the run in ``store``, recorded through ``gateway`` (bench profile, recording),
    which is committed at the end; (items sorted by id, abandoned reasons counted).

    Raises:
        ValueError: n < 1, or a gateway not in the bench profile (golden calls keep key placeholders).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if gateway.runtime.profile != "bench":
        raise ValueError(f"synthesize needs a bench-profile gateway, got {gateway.runtime.profile!r}")
    writer = writer or rule_writer
    catalog = gateway.catalog
    graph = LiveGraph.from_store(store, catalog)
    quota = quotas(n, type_mix)
    got: Counter[TaskType] = Counter()
    misses: Counter[TaskType] = Counter()
    given_up: set[TaskType] = set()
    abandoned: Counter[str] = Counter()
    kept: list[tuple[SynthDraft, Executed, str]] = []
    for attempt in range(max_attempts if max_attempts is not None else 40 * n):
        want = _target(quota, got, given_up)
        if want is None:
            break
        rng = np.random.default_rng([seed, attempt])
        task_id = f"edge-s{seed}-{attempt:05d}"
        session = f"edge-synth:{task_id}"
        gateway.runtime.reset_session(session)
        draft = SynthDraft(task_id=task_id, domain="traffic", runtime=gateway.runtime, session=session,
                           rng=random.Random(f"{seed}:{attempt}"), template=f"edge:{want.value}")
        try:
            executed = await _attempt(draft, graph, want, rng)
            if got[executed.task_type] >= quota.get(executed.task_type, 0):
                raise Abandon(f"made a {executed.task_type.value} item, that class is full")
            query, writer_id = writer(executed.trace, catalog, rng)
            given = [*executed.trace.start_args.values(), *(v for h in executed.trace.hops for v in h.given.values()),
                     *(v for _, args in executed.trace.others for v in args.values())]
            if leaked := leaks(query, executed.trace.bound_values, allowed=given):
                raise Abandon(f"the question would leak junction values {leaked}")
        except (Abandon, DraftError) as exc:
            abandoned[_reason(want, exc)] += 1
            misses[want] += 1
            if misses[want] >= GIVE_UP:
                given_up.add(want)
            continue
        misses[want] = 0
        draft.domain = catalog.get(executed.trace.start).domain
        draft.ask(query)
        if executed.number:
            draft.answer_number(executed.answer[0])
        else:
            draft.answer_string(*executed.answer)
        draft.tags += sorted({j.type.value.lower() for j in executed.junctions} | {executed.task_type.value.lower()})
        draft.notes = f"EDGE Phase B {executed.task_type.value} from {graph.run}"
        got[executed.task_type] += 1
        kept.append((draft, executed, writer_id))
    for t in sorted(given_up):
        abandoned[f"{t.value}: gave up after {GIVE_UP} failed attempts in a row"] += 0
    ref = gateway.commit()
    if ref is None and kept:
        raise DraftError("the items made calls but nothing was recorded")
    pinned = f"{ref.name}@{ref.version}" if ref is not None else ""
    items = [_item(d, e, w, pinned, catalog, seed, graph.run) for d, e, w in kept]
    return sorted(items, key=lambda i: i.task.id), abandoned


def _reason(want: TaskType, exc: Exception) -> str:
    text = str(exc)
    return f"{want.value}: {text[:160]}"


def _item(draft: SynthDraft, executed: Executed, writer_id: str, pinned: str, catalog: Any, seed: int,
          run: str) -> SynthItem:
    order = sorted(range(len(draft.calls)), key=lambda i: draft.calls[i].step)  # to_task's stable sort
    golden_index = {d: g for g, d in enumerate(order)}
    task = parse_task(to_task(draft, pinned, catalog))
    return SynthItem(task=task, task_type=executed.task_type, junctions=tuple(executed.junctions),
                     final=executed.final, recipe=remap(executed.recipe, golden_index),
                     call_records=tuple(draft.page_records[i] for i in order), seed=seed, graph_run=run,
                     writer=writer_id)
