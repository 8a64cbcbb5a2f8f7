"""Where a round's sampled paths run: in this process, in a pool of local processes, or as Ray tasks.

    paths = InProcessPaths(runner, concurrency=8)                     # one event loop, the default
    paths = ProcessPaths(opener, plans, workers=2, concurrency=8)     # one runtime per local process
    paths = RayPaths(opener, plans, address="auto", concurrency=8)    # the same function as Ray tasks
    results = await paths.run(jobs, cache)                            # one PathResult per job, in job order

A round is sampled in full before any path runs (``run_round``), and each job carries its own seeded
generator, so where a path runs never changes what it does: the three executors give the same records for
the same seed (tests/edge/test_pool.py). The in-process sandbox answers a call in ~5 ms of Python and DuckDB
work on the event loop's thread, so a single process is bound to one core; worker processes, each with
its own runtime over the same world file, use the others.

A worker opens its runtime once with ``opener`` (a picklable, argument-free callable returning an open
gateway: ``functools.partial`` of a module-level function), keeps it and its event loop for the process's
life, and receives the edges' source plans once (process initializer / ``ray.put``), not per chunk.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .executor import Observation, PathRunner
from .sampler import EdgeKey
from .store import TrialRecord

__all__ = ["InProcessPaths", "PathExecutor", "PathJob", "PathResult", "ProcessPaths", "RayPaths", "run_chunk"]

PathResult = tuple[list[TrialRecord], list[Observation]]
Cache = Mapping[str, Sequence[Mapping[str, Any]]]
Opener = Callable[[], Any]  # -> a gateway: .runtime, .catalog and async .aclose()


@dataclass(frozen=True)
class PathJob:
    path: tuple[EdgeKey, ...]
    rng: np.random.Generator  # the trial's generator, as the sampler left it
    trial: tuple[int, int]  # (round, m)


class PathExecutor(Protocol):
    async def run(self, jobs: Sequence[PathJob], cache: Cache) -> list[PathResult]: ...

    def close(self) -> None: ...


async def _run_jobs(runner: PathRunner, jobs: Sequence[PathJob], cache: Cache, concurrency: int) -> list[PathResult]:
    limit = asyncio.Semaphore(concurrency)

    async def one(job: PathJob) -> PathResult:
        async with limit:
            return await runner.run(job.path, job.rng, trial=job.trial, cache=cache)

    return list(await asyncio.gather(*(one(j) for j in jobs)))


class InProcessPaths:
    """The round's paths on this process's event loop, ``concurrency`` at a time."""

    def __init__(self, runner: PathRunner, *, concurrency: int = 8):
        self.runner, self.concurrency = runner, concurrency

    async def run(self, jobs: Sequence[PathJob], cache: Cache) -> list[PathResult]:
        return await _run_jobs(self.runner, jobs, cache, self.concurrency)

    def close(self) -> None:
        pass


# --- the worker side: one runtime and event loop per process -------------------------------------------------

@dataclass
class _Worker:
    loop: asyncio.AbstractEventLoop
    gateway: Any
    runner: PathRunner


_WORKER: _Worker | None = None


def _init_worker(opener: Opener, plans: Mapping[EdgeKey, Any], retries: int) -> None:
    global _WORKER
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    gateway = opener()
    _WORKER = _Worker(loop, gateway, PathRunner(gateway.runtime, gateway.catalog, plans, retries=retries))


def run_chunk(jobs: Sequence[PathJob], cache: Cache, concurrency: int) -> list[PathResult]:
    """Run jobs on this worker process's runtime (opened by ``_init_worker``)."""
    if _WORKER is None:
        raise RuntimeError("run_chunk runs in a worker process started with _init_worker")
    return _WORKER.loop.run_until_complete(_run_jobs(_WORKER.runner, jobs, cache, concurrency))


def _chunks(jobs: Sequence[PathJob], n: int) -> list[Sequence[PathJob]]:
    """``jobs`` in ``n`` contiguous slices of near-equal size (empty ones dropped)."""
    size, extra = divmod(len(jobs), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (i < extra)
        if end > start:
            out.append(jobs[start:end])
        start = end
    return out


def _cache_for(jobs: Sequence[PathJob], cache: Cache) -> dict[str, Sequence[Mapping[str, Any]]]:
    """The part of the observation cache a chunk can use: the inputs seen for its paths' first tools."""
    firsts = {j.path[0][0] for j in jobs if j.path}
    return {tool: cache[tool] for tool in firsts if tool in cache}


def _flatten(parts: Sequence[list[PathResult]]) -> list[PathResult]:
    return [r for part in parts for r in part]


class ProcessPaths:
    """The round's paths split over ``workers`` local processes (spawned; each opens its own runtime)."""

    def __init__(self, opener: Opener, plans: Mapping[EdgeKey, Any], *, workers: int, concurrency: int = 8,
                 retries: int = 2, chunks_per_worker: int = 4):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers, self.concurrency, self.chunks = workers, concurrency, workers * chunks_per_worker
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_worker, initargs=(opener, dict(plans), retries))

    async def run(self, jobs: Sequence[PathJob], cache: Cache) -> list[PathResult]:
        loop = asyncio.get_running_loop()
        futures = [loop.run_in_executor(self._pool, run_chunk, chunk, _cache_for(chunk, cache), self.concurrency)
                   for chunk in _chunks(jobs, self.chunks)]
        return _flatten(await asyncio.gather(*futures))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _ray_chunk(opener: Opener, plans: Mapping[EdgeKey, Any], retries: int, jobs: Sequence[PathJob], cache: Cache,
               concurrency: int) -> list[PathResult]:
    """The Ray task: the same ``run_chunk``, opening this worker's runtime on its first chunk."""
    if _WORKER is None:
        _init_worker(opener, plans, retries)
    return run_chunk(jobs, cache, concurrency)


class RayPaths:
    """The round's paths as Ray tasks on the cluster at ``address`` ("local" starts one on this host)."""

    def __init__(self, opener: Opener, plans: Mapping[EdgeKey, Any], *, address: str, concurrency: int = 8,
                 retries: int = 2, chunks: int | None = None, num_cpus: int | None = None):
        try:
            import ray  # verl's engine; only this executor needs it
        except ImportError as exc:
            raise RuntimeError("running paths as Ray tasks needs Ray: pip install 'kopa-appliance[ray]'") from exc

        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(address=None if address == "local" else address, num_cpus=num_cpus if address == "local" else None,
                     include_dashboard=False, log_to_driver=False, configure_logging=False)
        self.concurrency = concurrency
        self.chunks = chunks or max(1, int(ray.cluster_resources().get("CPU", 1))) * 4
        self._task = ray.remote(num_cpus=1)(_ray_chunk)
        self._opener, self._plans, self._retries = ray.put(opener), ray.put(dict(plans)), retries

    async def run(self, jobs: Sequence[PathJob], cache: Cache) -> list[PathResult]:
        refs = [self._task.remote(self._opener, self._plans, self._retries, chunk, _cache_for(chunk, cache),
                                  self.concurrency) for chunk in _chunks(jobs, self.chunks)]
        return _flatten(await asyncio.gather(*refs))

    def close(self) -> None:
        if self._owns:
            self._ray.shutdown()
