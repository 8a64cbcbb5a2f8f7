"""A benchmark run started from the console: ``bench.runner`` in a thread of its own, cancellable, with progress.

    job = BenchJob(BenchRequest("oracle", tasks_file, seeds=(0,), rollouts=1), settings, records)
    result = job.run(on_progress)        # blocks: call it from a worker thread
    job.cancel()                         # from any thread; run() then ends with JobCancelled

The run is recorded in the metadata DB when it starts and again when it stops (also when cancelled),
as ``kopa bench run`` records it, so a cancelled run shows its episodes so far.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from appliance.bench_cli import bundle_folder
from appliance.config import KopaSettings
from bench.agents import make_agent
from bench.runner import REPLAY_STATS_FILE, RunResult, open_bench_gateway, run_benchmark, run_bundle
from bench.task import load_tasks
from mcp_gateway.catalog import Catalog

from .records import Records

Progress = Callable[[int, int, int], None]  # (done, total, passed)
AGENTS = ("oracle", "first-page")  # the deterministic baselines; model agents need an endpoint: use the CLI


class JobCancelled(Exception):
    """The operator cancelled the run; the episodes written so far stay in its directory."""


@dataclass(frozen=True)
class BenchRequest:
    agent: str
    tasks_file: Path
    seeds: tuple[int, ...] = (0,)
    rollouts: int = 1


class BenchJob:
    def __init__(self, request: BenchRequest, settings: KopaSettings, records: Records, catalog: Catalog,
                 run_dir: Path | None = None) -> None:
        if request.agent not in AGENTS:
            raise ValueError(f"agent {request.agent!r}: the console starts {' or '.join(AGENTS)}; "
                             "run model agents with `kopa bench run`")
        self.request, self.settings, self.records, self.catalog = request, settings, records, catalog
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.run_dir = run_dir or settings.home_dir / "runs" / f"bench-{stamp}"
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def run(self, on_progress: Progress) -> RunResult:
        """Run every episode (blocking; its own event loop).

        Raises:
            JobCancelled: ``cancel`` was called; ValueError: bad tasks, seeds or bundle.
        """
        tasks = load_tasks(self.request.tasks_file, catalog=self.catalog)
        started = False
        passed = 0

        def progress(done: int, total: int, outcome) -> None:
            nonlocal started, passed
            if outcome is None:  # run.json is written: the run has a row from now on
                started = True
                self.records.record_run(self.run_dir)
            passed += bool(outcome is not None and outcome.passed)
            on_progress(done, total, passed)
            if self._cancelled.is_set():
                raise JobCancelled(f"cancelled after {done} of {total} episodes")

        async def go() -> RunResult:
            bundle = run_bundle(tasks)
            gateway = open_bench_gateway(bundle, home=self.settings.home_dir,
                                         cassettes=bundle_folder(self.settings, bundle, None),
                                         stats_file=self.run_dir / REPLAY_STATS_FILE)
            try:
                return await run_benchmark(tasks, make_agent(self.request.agent), gateway,
                                           rollouts=self.request.rollouts, seeds=self.request.seeds,
                                           out_dir=self.run_dir, tasks_file=self.request.tasks_file,
                                           agent_name=self.request.agent, progress=progress)
            finally:
                await gateway.aclose()

        try:
            return asyncio.run(go())
        finally:
            if started:
                self.records.record_run(self.run_dir)
