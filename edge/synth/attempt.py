"""One synthesis attempt: a typed trajectory executed on a (non-recording) runtime, and what it needs to be kept.

    result = await run_attempt(runtime, graph, AttemptJob(seed=0, attempt=17, want=TaskType.DRV, uses=uses))
    result.executed          # the trajectory (None when abandoned; ``reason`` says why)
    result.calls             # every golden call as made, to make again through the recording runtime

An attempt is a pure function of (graph, world, seed, attempt, wanted class, usage counts): its generators are
seeded by (seed, attempt), so where it runs (this process, a worker process) never changes what it does. The
builder re-makes the calls of the attempts it keeps through its recording gateway, so a bundle holds exactly
the golden calls of the kept items, whatever ran where.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.taskset.draft import Draft, DraftError

from .execute import Abandon, Executed, run_chain, run_comparison, run_conditional, run_semantic
from .item import TaskType
from .lookups import add_lookups
from .walk import START_BROADEN, LiveGraph

__all__ = ["AttemptJob", "AttemptResult", "GoldenInvocation", "SynthDraft", "attempt_id", "replay_calls",
           "run_attempt"]

# (min, max) edges of the sequential walk that starts an attempt steered toward each class. A FAN chain ends at
# its fan-out, so its walk has one edge (a longer one would only steer the first edge toward tools that go on);
# SEQ and MIXED ask for two and three at least (Table 10's depth), a chain still ending early where G* does.
WALK_EDGES = {TaskType.SEQ: (2, 4), TaskType.FAN: (1, 1), TaskType.DRV: (1, 4), TaskType.MIXED: (3, 5)}
# How often a walk's first call keeps only part of the inputs Phase A saw working (``LiveGraph.start_args``). A SEQ
# junction passes one value however many records carry it: asked with all of its inputs a start names one entity
# (one record), asked with part of them it reads several that share the value it hands on (a city's parks → that
# city's code), Table 11's one-to-many junction. Every SEQ start with two or more inputs is broadened: at 0.7, 44 %
# of SEQ items read a one-record output (an unscreened 1,000-item run on the 100-round graph, 2026-12-07), 36 % at 1.
BROADEN = {TaskType.SEQ: 1.0}  # the other classes: START_BROADEN


def attempt_id(seed: int, attempt: int) -> str:
    """The item id of an attempt; six digits keep id order = attempt order up to a million attempts."""
    return f"edge-s{seed}-{attempt:06d}"


@dataclass(frozen=True)
class GoldenInvocation:
    tool: str
    args: dict[str, Any]
    step: int
    page: int | None
    size: int | None
    compare: tuple[str, ...] | None = None


@dataclass
class SynthDraft(Draft):
    """A Draft that also keeps how many records each golden call returned and how each was invoked."""

    page_records: list[int] = field(default_factory=list)
    invocations: list[GoldenInvocation] = field(default_factory=list)

    async def call(self, tool: str, args: dict[str, Any] | None = None, *, step: int, compare: Any = None,
                   page: int | None = None, size: int | None = None) -> Any:
        self.invocations.append(GoldenInvocation(tool, dict(args or {}), step, page, size,
                                                  None if compare is None else tuple(compare)))
        result = await super().call(tool, args, step=step, compare=compare, page=page, size=size)
        self.page_records.append(len(result.records))
        return result

    def adopt(self, calls: list[GoldenInvocation], page_records: list[int]) -> None:
        """Take ``calls`` as golden calls made elsewhere (a worker recorded them) without making them here: the
        draft ends as ``replay_calls`` would leave it."""
        for call, records in zip(calls, page_records, strict=True):
            self.invocations.append(call)
            self._golden(call.tool, dict(call.args), step=call.step, compare=call.compare, page=call.page,
                         size=call.size)
            self.page_records.append(records)


@dataclass(frozen=True)
class AttemptJob:
    seed: int
    attempt: int
    want: TaskType
    uses: Mapping[str, int] = field(default_factory=dict)  # start tools and edges already in kept items


@dataclass
class AttemptResult:
    job: AttemptJob
    executed: Executed | None
    reason: str | None
    calls: list[GoldenInvocation]
    page_records: list[int]
    rng: np.random.Generator  # as the attempt left it: the writer continues from here
    recorded: list[Any] | None = None  # the golden calls' exchanges, when a worker recorded them (runners)


def new_draft(runtime: Any, seed: int, attempt: int, want: TaskType) -> SynthDraft:
    task_id = attempt_id(seed, attempt)
    session = f"edge-synth:{task_id}"
    runtime.reset_session(session)
    return SynthDraft(task_id=task_id, domain="traffic", runtime=runtime, session=session,
                      rng=random.Random(f"{seed}:{attempt}"), template=f"edge:{want.value}")


async def _execute(draft: SynthDraft, graph: LiveGraph, job: AttemptJob, rng: np.random.Generator) -> Executed:
    want = job.want
    if want is TaskType.SEM:
        return await run_semantic(draft, graph, rng)
    if want is TaskType.CMP:
        return await run_comparison(draft, graph, rng)
    if want is TaskType.COND:
        return await run_conditional(draft, graph, rng)
    low, high = WALK_EDGES[want]
    walk = graph.walk(rng, edges=int(rng.integers(low, high + 1)), uses=job.uses,
                      broaden=BROADEN.get(want, START_BROADEN))
    if walk is None:
        raise Abandon("no start tool with known inputs and a live edge")
    return await run_chain(draft, walk, want=want, rng=rng)


async def run_attempt(runtime: Any, graph: LiveGraph, job: AttemptJob) -> AttemptResult:
    """Run one attempt on ``runtime`` (a bench-profile runtime; nothing needs to be recorded)."""
    rng = np.random.default_rng([job.seed, job.attempt])
    draft = new_draft(runtime, job.seed, job.attempt, job.want)
    try:
        executed, reason = await _execute(draft, graph, job, rng), None
        await add_lookups(draft, executed, graph)  # a name the question gives becomes its code by a golden call
        _check_composed(executed)
    except (Abandon, DraftError) as exc:
        executed, reason = None, str(exc)
    return AttemptResult(job, executed, reason, draft.invocations, draft.page_records, rng)


def _check_composed(executed: Executed) -> None:
    """A COND tail makes a chain MIXED only past two junctions. The paper's MIXED items are its long ones, combining
    patterns along sequential subchains (§5); a one-junction chain whose last records a threshold checks is a SEQ or
    DRV item with an if-clause, two calls, and made 91 of 397 MIXED items (an unscreened 1,000-item run on the
    100-round graph, 2026-12-07), all of them under Table 10's median.

    Raises:
        Abandon: the chain crossed one junction.
    """
    if executed.trace.final.get("kind") == "cond_tail" and len(executed.junctions) < 2:
        raise Abandon("a threshold on a one-junction chain's records composes no chain")


async def replay_calls(draft: SynthDraft, calls: list[GoldenInvocation], expected: list[int]) -> None:
    """Make ``calls`` again through ``draft``'s runtime (the recording one).

    Raises:
        DraftError: a call now returns a different number of records (the world changed under the run).
    """
    for call in calls:
        await draft.call(call.tool, call.args, step=call.step, compare=call.compare, page=call.page, size=call.size)
    if draft.page_records != expected:
        raise DraftError(f"{draft.task_id}: re-made calls returned {draft.page_records} records, the attempt saw "
                         f"{expected}; the synthesis worker and the recorder do not see the same world")
