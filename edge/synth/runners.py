"""Where synthesis attempts run: on this process's event loop, or in a pool of local worker processes.

    attempts = InProcessAttempts(gateway.runtime, graph)              # the default
    attempts = ProcessAttempts(opener, graph, workers=2)             # one runtime per worker process
    results = await attempts.run(jobs)                               # one AttemptResult per job, in job order

An attempt is seeded by (seed, attempt) and carries the usage counts it may read, so the two give the same
results for the same jobs (tests/edge/synth/test_parallel.py). The in-process sandbox answers a call with
Python and DuckDB work on the event loop's thread, so one process is bound to one core; worker processes, each
with its own runtime over the same world file, use the others. ``opener`` is a picklable, argument-free callable
returning an open bench-profile gateway that records nothing (``functools.partial`` of a module-level function).
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

from .attempt import AttemptJob, AttemptResult, run_attempt
from .walk import LiveGraph

__all__ = ["AttemptRunner", "InProcessAttempts", "ProcessAttempts", "run_attempt_chunk"]

Opener = Callable[[], Any]


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


def _init_worker(opener: Opener, graph: LiveGraph) -> None:
    global _WORKER
    _exit_with_parent(os.getppid())
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    _WORKER = _Worker(loop, opener(), graph)


def run_attempt_chunk(jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
    """Run jobs on this worker process's runtime (opened by ``_init_worker``)."""
    if _WORKER is None:
        raise RuntimeError("run_attempt_chunk runs in a worker process started with _init_worker")
    return _WORKER.loop.run_until_complete(_run_all(_WORKER.gateway.runtime, _WORKER.graph, jobs))


def _chunks(jobs: Sequence[AttemptJob], n: int) -> list[Sequence[AttemptJob]]:
    """``jobs`` in ``n`` interleaved slices: wanted classes (and their costs) spread evenly over the workers."""
    return [jobs[i::n] for i in range(n) if jobs[i::n]]


class ProcessAttempts:
    """Attempts split over ``workers`` spawned local processes."""

    concurrent = True

    def __init__(self, opener: Opener, graph: LiveGraph, *, workers: int, chunks_per_worker: int = 2):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.chunks = workers * chunks_per_worker
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_worker, initargs=(opener, graph))

    async def run(self, jobs: Sequence[AttemptJob]) -> list[AttemptResult]:
        loop = asyncio.get_running_loop()
        parts = await asyncio.gather(*(loop.run_in_executor(self._pool, run_attempt_chunk, chunk)
                                       for chunk in _chunks(jobs, self.chunks)))
        by_attempt = {r.job.attempt: r for part in parts for r in part}
        return [by_attempt[j.attempt] for j in jobs]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
