"""A benchmark run started from the console: ``bench.runner`` in a thread of its own, cancellable, with progress.

    job = BenchJob(BenchRunOptions(agent="oracle", tasks=tasks_file, seeds=(0,), rollouts=1), settings, records,
                   catalog)
    result = job.run(on_progress)        # blocks: call it from a worker thread
    job.cancel()                         # from any thread; run() then ends with JobCancelled

The options are ``kopa bench run``'s (``bench.options.BenchRunOptions``), checked the same way; the console
replays, and runs every agent the registry can open in the job's thread (``AGENTS``): the deterministic baselines,
an endpoint model on the agent profile (``[models.agent]``), and the local model, whose llama.cpp server
(``models.server.ModelServer``) is started in the job's thread for the run and stopped when it ends. The agent
endpoint (``--agent endpoint``) is served by ``kopa bench run``. The run
directory is named as the CLI names it (``bench.options.new_run_dir``). The run is recorded in the metadata DB
when it starts and again when it stops (also when cancelled), as ``kopa bench run`` records it, so a cancelled
run shows its episodes so far.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from appliance.bench_cli import bundle_folder, first_per_domain
from appliance.config import KopaSettings
from bench.agents import AGENTS as REGISTRY
from bench.agents import agent_names, open_agent
from bench.options import BenchRunOptions, new_run_dir
from bench.runner import REPLAY_STATS_FILE, RunResult, open_bench_gateway, run_benchmark, run_bundle
from bench.scoring.judge import judge_from_profile
from bench.task import load_tasks
from mcp_gateway.catalog import Catalog

from .records import Records

Progress = Callable[[int, int, int], None]  # (done, total, passed)
# The console's choices, from the registry: every agent it can open itself (the agent endpoint is the CLI's).
AGENTS = tuple(name for name in agent_names() if REGISTRY[name].make is not None)


class JobCancelled(Exception):
    """The operator cancelled the run; the episodes written so far stay in its directory."""


class BenchJob:
    def __init__(self, request: BenchRunOptions, settings: KopaSettings, records: Records, catalog: Catalog) -> None:
        """Raises: ValueError: an agent the console does not start, or a run that is not a replay."""
        if request.agent not in AGENTS:
            raise ValueError(f"agent {request.agent!r}: the console starts {', '.join(AGENTS)}; "
                             f"run {request.agent} with `kopa bench run`")
        if request.upstream != "replay" or request.mode != "replay":
            raise ValueError("the console replays the tasks' bundle; run other upstreams and the coverage pass with "
                             "`kopa bench run`")
        self.request, self.settings, self.records, self.catalog = request, settings, records, catalog
        self.run_dir = request.run_dir or new_run_dir(settings.home_dir / "runs")
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def run(self, on_progress: Progress) -> RunResult:
        """Run every episode (blocking; its own event loop).

        Raises:
            JobCancelled: ``cancel`` was called; ValueError: bad tasks, seeds or bundle, or an incomplete judge
            profile.
        """
        from bench.taskset.build import DEFAULT_TASKS

        options = self.request
        tasks_file = options.tasks or DEFAULT_TASKS
        judge = judge_from_profile(self.settings.models.judge)  # as `kopa bench run` scores
        tasks = load_tasks(tasks_file, catalog=self.catalog)
        if options.per_domain is not None:
            tasks = first_per_domain(tasks, options.per_domain)
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
                                         cassettes=bundle_folder(self.settings, bundle, options.cassettes),
                                         stats_file=self.run_dir / REPLAY_STATS_FILE)
            try:
                # a model server starts in this (the job's) thread and stops when the run ends
                async with open_agent(options.agent, profile=self.settings.models.agent,
                                      limits=self.settings.episode, **options.agent_overrides()) as agent:
                    return await run_benchmark(tasks, agent, gateway, rollouts=options.rollouts,
                                               seeds=options.seeds, out_dir=self.run_dir, tasks_file=tasks_file,
                                               concurrency=options.concurrency, resume=options.resume,
                                               agent_name=options.agent, progress=progress, judge=judge,
                                               limits=self.settings.episode)
            finally:
                await gateway.aclose()

        try:
            return asyncio.run(go())
        finally:
            if started:
                self.records.record_run(self.run_dir)
