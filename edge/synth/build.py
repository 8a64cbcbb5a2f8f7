"""Phase B's item producer: typed trajectories over G*, executed, asked in Korean, pinned to a bundle.

    gateway = open_recording_gateway(home, cassettes, "edge-synth", scale=..., stamp=RECORDED_AT)
    run = await synthesize(store, gateway, n=200, seed=0, explore=partial(open_sandbox_gateway, home, scale=1.0),
                           screen=Screen(catalog), workers=2)
    run.items, run.abandoned, run.screened
    # gateway.commit() was called: every item's task is pinned to the bundle version holding its calls

The n items are split over Table 12's classes by largest remainder (``quotas``). Attempts run in batches: a
batch's wanted classes are planned from the deficits and each class's yield so far (``plan_batch``), the
batch runs on a non-recording runtime (``explore``: in this process, or in ``workers`` processes), and the
results are taken in attempt order. Batch k is planned from the batches before k-1 (which is still running or
being taken): worker processes run one batch while this process records the one before. What actually ran
decides an item's class; an item is kept while its class has room, then its golden calls are made again through
the recording ``gateway``, so the bundle holds exactly the kept items' calls. With worker processes the workers
make them again, through a gateway recording into memory (``explore(record_into=capture)``), and this process adds
the kept items' exchanges to the recording (``Gateway.add_recorded``): the same exchanges in the same order. A
class that stops yielding (``GIVE_UP`` attempts in a row, more for a class whose yield was low) is given up, so a
graph that cannot make it does not stall the run. ``abandoned`` counts every reason an attempt was dropped.

With a ``screen`` (``edge.filter.screen.Screen``: the filter's rules, run as each item is made), only items that
pass it fill a quota, so the filtered dataset holds n items in Table 12's mix. ``screened`` counts the refused by
reason. A question that nearly repeats a kept one is refused before its calls are recorded (at 5,000 items, half of
what is made); the other refused items are still returned, so the funnel shows them.

Every choice is seeded by (seed, attempt) over sorted lists and a batch's plan depends only on the batches taken
before it, so the same run file, world and seed give the same calls, the same recording and byte-identical items,
whatever the number of workers.

A share of the items (``save_share``, seeded) also asks to keep the answer, as KOPA-Bench's tasks ask to add a name
to a watchlist or write a value into a note: the golden trajectory closes with ``add_to_watchlist`` (a name) or
``write_note`` (a number), the question says where, and the item is scored on the workspace state as well
(ENVIRONMENT). Phase A never calls a state-writing tool, so without this no item would show a model one.

``exclude_platforms`` holds platforms out of the corpus (Table 14): their tools leave G* before any walk, so no item
calls one (``kopa edge synth --exclude-platform``; an item that did anyway would be dropped here).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from bench.task import parse_task
from bench.taskset.build import to_task
from bench.taskset.draft import DraftError, number_text
from edge.graph.store import GraphStore

from .answer import remap
from .attempt import AttemptJob, AttemptResult, SynthDraft, attempt_id, new_draft, replay_calls
from .execute import Executed, Trace
from .item import Rejection, SynthItem, TaskType
from .platforms import held_out_platforms
from .realise import iraneun, leaks, realise
from .runners import AttemptRunner, InProcessAttempts, ProcessAttempts
from .walk import LiveGraph, edge_key

__all__ = ["BATCH", "GIVE_UP", "RECORDED_AT", "SAVE_SHARE", "TABLE_12", "SynthDraft", "SynthesisRun", "plan_batch",
           "quotas", "synthesize"]

TABLE_12: dict[TaskType, float] = {TaskType.MIXED: 36.7, TaskType.DRV: 19.7, TaskType.SEM: 17.0, TaskType.SEQ: 12.1,
                                   TaskType.CMP: 9.0, TaskType.COND: 2.8, TaskType.FAN: 2.7}
# Every synthesis call is recorded from the deterministic in-process sandbox with this recording time (the world's
# "today") and zero timings, so the same graph and seed record the same bundle version: byte-identical items.
RECORDED_AT = "2025-06-30T00:00:00.000Z"
GIVE_UP = 40  # at least this many attempts in a row without an item of a class before that class is given up
BATCH = 64  # attempts planned and run together (fixed: the plan, hence the items, must not depend on workers)
SAVE_SHARE = 0.1  # items that also keep their answer in the workspace (KOPA-Bench: 14 of 145 tasks write state)
_WATCHLISTS = ("나중에 볼 것", "챙겨 볼 것", "다시 볼 것", "오늘의 결과")
_NOTE_KEYS = ("조회 결과", "확인한 값", "오늘 찾은 값", "메모해 둘 값")

_PENDING = "edge-synth@pending"  # what an item is pinned to until the recording is committed
Writer = Callable[[Trace, Any, np.random.Generator], tuple[str, str]]  # → (query, writer id)


class Screen(Protocol):  # edge.filter.screen.Screen
    def __call__(self, item: SynthItem) -> Rejection | None: ...

    def duplicate(self, item_id: str, query: str) -> Rejection | None: ...


Opener = Callable[[], Any]


@dataclass
class SynthesisRun:
    items: list[SynthItem]  # sorted by id; those the screen refused included
    abandoned: Counter[str] = field(default_factory=Counter)  # attempt dropped: why
    screened: Counter[str] = field(default_factory=Counter)  # made, but refused by the screen: stage and reason
    attempts: int = 0
    excluded_platforms: tuple[str, ...] = ()  # held out: no item calls a tool of these


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


@dataclass
class _Tally:
    """What the plan reads: items counted per class, and tries and successes per wanted class."""

    quota: dict[TaskType, int]
    got: Counter[TaskType] = field(default_factory=Counter)
    tries: Counter[TaskType] = field(default_factory=Counter)
    wins: Counter[TaskType] = field(default_factory=Counter)
    misses: Counter[TaskType] = field(default_factory=Counter)  # in a row
    given_up: set[TaskType] = field(default_factory=set)

    def open(self) -> list[TaskType]:
        return [t for t in self.quota if self.got[t] < self.quota[t] and t not in self.given_up]

    def tried(self, want: TaskType, won: bool) -> None:
        self.tries[want] += 1
        self.wins[want] += won
        self.misses[want] = 0 if won else self.misses[want] + 1
        # a run of misses twenty times longer than the class's yield before it predicts (at least GIVE_UP): a class
        # that merely has a low yield is not given up, one that stopped yielding is
        before = self.tries[want] - self.misses[want]
        if self.misses[want] >= max(GIVE_UP, 20 * (before + 2) / (self.wins[want] + 1)):
            self.given_up.add(want)


def plan_batch(tally: _Tally, size: int = BATCH) -> list[TaskType]:
    """The wanted class of each attempt of the next batch.

    A class needs (quota - got) / yield attempts, its yield being (wins + 1) / (tries + 2) so far; the batch (at
    most ``size``, fewer near the end) is split over the open classes in proportion to that need, and the
    attempts interleave the classes, so any prefix of the batch is spread like the whole.
    """
    need = {t: (tally.quota[t] - tally.got[t]) * (tally.tries[t] + 2) / (tally.wins[t] + 1) for t in tally.open()}
    if not need:
        return []
    slots = quotas(min(size, max(len(need), math.ceil(sum(need.values())))), need)
    order: list[TaskType] = []
    while any(slots.values()):
        for t in need:
            if slots[t]:
                order.append(t)
                slots[t] -= 1
    return order


async def synthesize(store: GraphStore, gateway: Any, n: int, seed: int, *, explore: Opener,
                     type_mix: Mapping[TaskType, float] = TABLE_12, writer: Writer | None = None,
                     screen: Screen | None = None, workers: int = 1,
                     max_attempts: int | None = None, exclude_platforms: Sequence[str] = (),
                     save_share: float = SAVE_SHARE) -> SynthesisRun:
    """Up to ``n`` items from the run in ``store``, recorded through ``gateway`` (bench profile, recording), which is
    committed at the end. ``explore`` opens the runtime attempts run on (bench profile, recording nothing): once
    here with ``workers=1``, once per worker process otherwise (it must then be picklable, and ``explore(record_into=
    capture)`` must open the same gateway recording as ``gateway`` does, into that ``recorder.Capture``).

    Raises:
        ValueError: n < 1, workers < 1, a gateway not in the bench profile (golden calls keep key placeholders), or an
            unknown platform id in ``exclude_platforms`` (the message names the known ones).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if gateway.runtime.profile != "bench":
        raise ValueError(f"synthesize needs a bench-profile gateway, got {gateway.runtime.profile!r}")
    held_out = held_out_platforms(exclude_platforms)
    catalog = gateway.catalog
    graph = LiveGraph.from_store(store, catalog, exclude_platforms=held_out)
    explorer = None
    runner: AttemptRunner
    if workers == 1:
        explorer = explore()
        runner = InProcessAttempts(explorer.runtime, graph)
    else:
        runner = ProcessAttempts(explore, graph, workers=workers, record=True)
    if not 0 <= save_share <= 1:
        raise ValueError(f"save_share is a share of the items, in [0, 1]; got {save_share}")
    keeper = _Keeper(gateway, catalog, graph, writer or rule_writer, screen, _Tally(quotas(n, type_mix)), held_out,
                     save_share)
    limit = max_attempts if max_attempts is not None else 40 * n
    attempt = 0
    in_flight: _Batch | None = None
    try:
        while True:
            # batch k is planned before batch k-1 is taken, so the workers run it while this process records
            wants = plan_batch(keeper.tally)[:limit - attempt] if attempt < limit else []
            uses = dict(keeper.uses)
            planned = _Batch(runner, [AttemptJob(seed, attempt + i, want, uses)
                                     for i, want in enumerate(wants)]) if wants else None
            attempt += len(wants)
            if in_flight is None and planned is None:
                break
            if in_flight is not None:
                for result in await in_flight.results():
                    await keeper.take(result)
            in_flight = planned
    finally:
        if in_flight is not None:
            in_flight.cancel()
        runner.close()
        if explorer is not None:
            await explorer.aclose()
    for t in sorted(keeper.tally.given_up):
        keeper.abandoned[f"{t.value}: gave up after {GIVE_UP} failed attempts in a row"] += 0
    ref = gateway.commit()
    if ref is None and keeper.kept:
        raise DraftError("the items made calls but nothing was recorded")
    pinned = f"{ref.name}@{ref.version}" if ref is not None else ""
    items = [i.model_copy(update={"task": i.task.model_copy(update={"bundle": pinned})}) for i in keeper.kept]
    return SynthesisRun(sorted(items, key=lambda i: i.task.id), keeper.abandoned, keeper.screened, attempt, held_out)


class _Batch:
    """Attempts submitted to a runner. A concurrent runner (worker processes) starts them at once, so this process
    can take the batch before meanwhile; the in-process runner shares this thread and runs them when awaited."""

    def __init__(self, runner: AttemptRunner, jobs: list[AttemptJob]):
        self.runner, self.jobs = runner, jobs
        self.task = asyncio.ensure_future(runner.run(jobs)) if runner.concurrent else None

    async def results(self) -> list[AttemptResult]:
        return await self.task if self.task is not None else await self.runner.run(self.jobs)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()


class _Keeper:
    """Takes attempt results in attempt order: class room, query, leaks, re-recording, the screen."""

    def __init__(self, gateway: Any, catalog: Any, graph: LiveGraph, writer: Writer, screen: Screen | None,
                 tally: _Tally, held_out: tuple[str, ...] = (), save_share: float = SAVE_SHARE):
        self.gateway, self.catalog, self.graph, self.writer, self.screen = gateway, catalog, graph, writer, screen
        self.tally, self.held_out, self.save_share = tally, held_out, save_share
        self.uses: Counter[str] = Counter()
        self.abandoned: Counter[str] = Counter()
        self.screened: Counter[str] = Counter()
        self.kept: list[SynthItem] = []  # pinned to _PENDING until the recording is committed

    def _drop(self, want: TaskType, reason: str) -> None:
        self.abandoned[f"{want.value}: {reason[:160]}"] += 1
        self.tally.tried(want, False)

    async def take(self, result: AttemptResult) -> None:
        job, executed = result.job, result.executed
        if executed is None:
            return self._drop(job.want, result.reason or "abandoned")
        if self.tally.got[executed.task_type] >= self.tally.quota.get(executed.task_type, 0):
            return self._drop(job.want, f"made a {executed.task_type.value} item, that class is full")
        if held := sorted({self.catalog.get(c.tool).platform for c in result.calls} & set(self.held_out)):
            return self._drop(job.want, f"it calls held-out platform(s) {held}")  # G* has none: a guard
        query, writer_id = self.writer(executed.trace, self.catalog, result.rng)
        trace = executed.trace
        given = [*trace.start_args.values(), *(v for h in trace.hops for v in h.given.values()),
                 *(v for _, args in trace.others for v in args.values())]
        if leaked := leaks(query, trace.bound_values, allowed=given):
            return self._drop(job.want, f"the question would leak junction values {leaked}")
        saving = _saving(executed, query, result.rng) if result.rng.random() < self.save_share else None
        if saving is not None:
            query = saving.query
        if self.screen is not None and (twin := self.screen.duplicate(attempt_id(job.seed, job.attempt), query)):
            # refused before its calls are recorded: at 5,000 items half of what is made repeats a kept question,
            # and recording then replaying those calls was most of the run
            self.screened[f"{twin.stage}: {_kind(twin.reason)}"] += 1
            return self.tally.tried(job.want, False)
        draft = new_draft(self.gateway.runtime, job.seed, job.attempt, job.want)
        if result.recorded is not None:  # a worker made the calls again through its recorder: its exchanges are kept
            self.gateway.add_recorded(result.recorded)
            draft.adopt(result.calls, result.page_records)
        else:
            await replay_calls(draft, result.calls, result.page_records)
        if executed.expression is not None:  # the answer is calculated: the trajectory closes with the calculator
            value = await draft.evaluate(executed.expression, step=max(c.step for c in draft.calls) + 1)
            if number_text(value) != executed.answer[0]:
                return self._drop(job.want, f"evaluate_expression({executed.expression!r}) gives {value}, "
                                            f"not the answer {executed.answer[0]}")
        if saving is not None:
            await draft.call(saving.tool, saving.args, step=max(c.step for c in draft.calls) + 1)
        draft.domain = self.catalog.get(trace.start).domain
        draft.ask(query)
        if executed.number:
            draft.answer_number(executed.answer[0])
        else:
            draft.answer_string(*executed.answer)
        draft.tags += sorted({j.type.value.lower() for j in executed.junctions} | {executed.task_type.value.lower()}
                             | ({"lookup"} if trace.lookups else set()))  # a name the question gives is looked up
        draft.notes = f"EDGE Phase B {executed.task_type.value} from {self.graph.run}"
        item = _item(draft, executed, writer_id, _PENDING, self.catalog, job.seed, self.graph.run)
        self.kept.append(item)
        if self.screen is not None:
            if (rejection := self.screen(item)) is not None:
                self.screened[f"{rejection.stage}: {_kind(rejection.reason)}"] += 1
                return self.tally.tried(job.want, False)
        self.tally.got[executed.task_type] += 1
        self.tally.tried(job.want, True)
        self.uses[trace.start] += 1
        for hop in trace.hops:
            self.uses[edge_key(hop.junction)] += 1


@dataclass(frozen=True)
class _Saving:
    tool: str
    args: dict[str, Any]
    query: str


def _saving(executed: Executed, query: str, rng: np.random.Generator) -> _Saving:
    """The call that closes the golden trajectory by keeping the answer in the workspace; the question, asking
    for it too."""
    answer = executed.answer[0]
    if executed.number:
        key = _NOTE_KEYS[int(rng.integers(len(_NOTE_KEYS)))]
        quoted = f"'{key}'"
        return _Saving("write_note", {"key": key, "text": answer}, f"{query} 그 값은 {iraneun(quoted)} 키로 메모해 두세요.")
    name = _WATCHLISTS[int(rng.integers(len(_WATCHLISTS)))]
    return _Saving("add_to_watchlist", {"list_name": name, "item": answer},
                   f"{query} 그리고 답을 '{name}' 관심목록에 메모 없이 추가해 주세요.")


def _kind(reason: str) -> str:
    """A rejection reason without the values and ids it names (for counting by kind)."""
    return reason.split(" (")[0].split(" of ")[0][:80]


def _item(draft: SynthDraft, executed: Executed, writer_id: str, pinned: str, catalog: Any, seed: int,
          run: str) -> SynthItem:
    order = sorted(range(len(draft.calls)), key=lambda i: draft.calls[i].step)  # to_task's stable sort
    golden_index = {d: g for g, d in enumerate(order)}
    task = parse_task(to_task(draft, pinned, catalog))
    return SynthItem(task=task, task_type=executed.task_type, junctions=tuple(executed.junctions),
                     final=executed.final, recipe=remap(executed.recipe, golden_index),
                     call_records=tuple(draft.page_records[i] for i in order), seed=seed, graph_run=run,
                     writer=writer_id)
