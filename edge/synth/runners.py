"""Where synthesis attempts run: on this process's event loop, or in a pool of local worker processes.

    attempts = InProcessAttempts(gateway.runtime, graph)              # the default
    attempts = ProcessAttempts(opener, graph, workers=2)             # one runtime per worker process
    results = await attempts.run(jobs)                               # one AttemptResult per job, in job order

An attempt is seeded by (seed, attempt) and carries the usage counts it may read, so the two give the same
results for the same jobs (tests/edge/synth/test_synthesis.py). The in-process sandbox answers a call with
Python and DuckDB work on the event loop's thread, so one process is bound to one core; worker processes, each
with its own runtime over the same world file, use the others. ``opener`` is a picklable, argument-free callable
returning an open bench-profile gateway that records nothing (``functools.partial`` of a module-level function).

``ProcessAttempts(..., record=True)``: each worker also makes the golden calls of every attempt that became a
trajectory again through a gateway recording into memory (``opener(record_into=capture)``, the same gateway in
record mode) and returns the exchanges with the result (``AttemptResult.recorded``). The process that keeps items
then only writes the kept ones' exchanges: re-making each kept call through its own recorder was most of its work
while the workers waited (a profile of 300 items: 57 of its 76 s taking results).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from recorder import Capture

from .attempt import AttemptJob, AttemptResult, new_draft, replay_calls, run_attempt
from .walk import LiveGraph

__all__ = ["AttemptRunner", "InProcessAttempts", "ProcessAttempts", "record_golden_calls", "run_attempt_chunk"]

Opener = Callable[..., Any]  # () -> a gateway recording nothing; (record_into=capture) -> one recording into it


class AttemptRunner(Protocol):
    concurrent: bool  # runs a batch beside this process's own work (worker processes), or on its thread

    async def run(self, jobs: Sequence[AttemptJob]) -> list[AttemptResult]: ...

    def close(self) -> None: ...


async def _run_all(runtime: Any, graph: LiveGraph, jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
    # one after the other: the in-process sandbox holds the thread for each call, so concurrency would only
    # interleave sessions without adding throughput
    return [await run_attempt(runtime, graph, job) for job in jobs]


class InProcessAttempts:
    concurrent = False

    def __init__(self, runtime: Any, graph: LiveGraph):
        self.runtime, self.graph = runtime, graph

    async def run(self, jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
        return await _run_all(self.runtime, self.graph, jobs)

    def close(self) -> None:
        pass


@dataclass
class _Worker:
    loop: asyncio.AbstractEventLoop
    gateway: Any
    graph: LiveGraph
    recorder: Any = None  # the gateway recording into ``capture`` (record=True)
    capture: Capture | None = None

    async def run(self, jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
        results = await _run_all(self.gateway.runtime, self.graph, jobs)
        if self.recorder is not None and self.capture is not None:
            for result in results:
                if result.executed is not None:
                    result.recorded = await record_golden_calls(self.recorder.runtime, self.capture, result)
        return results


async def record_golden_calls(runtime: Any, capture: Capture, result: AttemptResult) -> list[Any]:
    """The exchanges of ``result``'s golden calls made again through ``runtime`` (recording into ``capture``), as the
    keeping process's recorder would have recorded them."""
    job = result.job
    capture.drain()
    await replay_calls(new_draft(runtime, job.seed, job.attempt, job.want), result.calls, result.page_records)
    return capture.drain()


_WORKER: _Worker | None = None


def _exit_with_parent(parent: int, every: float = 1.0) -> None:
    """End this worker once its parent is gone. A pool's workers wait on their task queue forever, so a synthesis
    killed by a signal to its own process (``kill PID``: no shutdown ran) left them asleep, each holding its runtime's
    memory (~0.5 GB over the full world)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _init_worker(opener: Opener, graph: LiveGraph, record: bool = False) -> None:
    global _WORKER
    _exit_with_parent(os.getppid())
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    capture = Capture() if record else None
    _WORKER = _Worker(loop, opener(), graph, opener(record_into=capture) if record else None, capture)


def run_attempt_chunk(jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
    """Run jobs on this worker process's runtime (opened by ``_init_worker``)."""
    if _WORKER is None:
        raise RuntimeError("run_attempt_chunk runs in a worker process started with _init_worker")
    return _WORKER.loop.run_until_complete(_WORKER.run(jobs))


def _chunks(jobs: Sequence[AttemptJob], n: int) -> list[Sequence[AttemptJob]]:
    """``jobs`` in ``n`` interleaved slices: wanted classes (and their costs) spread evenly over the workers."""
    return [jobs[i::n] for i in range(n) if jobs[i::n]]


class ProcessAttempts:
    """Attempts split over ``workers`` spawned local processes."""

    concurrent = True

    def __init__(self, opener: Opener, graph: LiveGraph, *, workers: int, chunks_per_worker: int = 2,
                 record: bool = False):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.chunks = workers * chunks_per_worker
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_worker, initargs=(opener, graph, record))

    async def run(self, jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
        loop = asyncio.get_running_loop()
        parts = await asyncio.gather(*(loop.run_in_executor(self._pool, run_attempt_chunk, chunk)
                                       for chunk in _chunks(jobs, self.chunks)))
        by_attempt = {r.job.attempt: r for part in parts for r in part}
        return [by_attempt[j.attempt] for j in jobs]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
