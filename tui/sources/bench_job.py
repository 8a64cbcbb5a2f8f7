"""A benchmark run started from the console: ``kopa bench run``'s run in a thread of its own, cancellable, with
progress.

    job = BenchJob(BenchRunOptions(agent="oracle", tasks=tasks_file, seeds=(0,), rollouts=1), settings, records,
                   catalog)
    result = job.run(on_progress)        # blocks: call it from a worker thread
    job.cancel()                         # from any thread; run() then ends with JobCancelled

The run is the CLI's (``bench.run_flow.run_bench``: the same options, agent, gateway, episodes and
``coverage.json``), so a console run writes the files a ``kopa bench run`` of the same options writes. The console
replays, and starts every agent of the registry (``AGENTS``) in the job's thread: the deterministic baselines, an
endpoint model on the agent profile (``[models.agent]``), the local model and the agent endpoint (``endpoint``),
whose model server (``models.server.ModelServer``) is started for the run and stopped when it ends. The run
directory is named as the CLI names it (``bench.run_flow.with_run_dir``), when the job is made. The run is recorded
in the metadata DB when it starts and again when it stops (also when cancelled), as ``kopa bench run`` records it,
so a cancelled run shows its episodes so far. The run's notices (the tool catalog's) are kept in ``notices``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from appliance.config import KopaSettings
from bench.agents import agent_names
from bench.options import BenchRunOptions
from bench.run_flow import run_bench, with_run_dir
from bench.runner import RunResult
from mcp_gateway.catalog import Catalog

from .records import Records

Progress = Callable[[int, int, int], None]  # (done, total, passed)
AGENTS = agent_names()  # the console's choices: every agent of the registry


class JobCancelled(Exception):
    """The operator cancelled the run; the episodes written so far stay in its directory."""


class BenchJob:
    def __init__(self, request: BenchRunOptions, settings: KopaSettings, records: Records, catalog: Catalog) -> None:
        """Raises: ValueError: a run that is not a replay; OSError: the run directory cannot be made."""
        if request.upstream != "replay" or request.mode != "replay":
            raise ValueError("the console replays the tasks' bundle; run other upstreams and the coverage pass with "
                             "`kopa bench run`")
        self.settings, self.records, self.catalog = settings, records, catalog
        self.request = with_run_dir(request, settings)
        assert self.request.run_dir is not None
        self.run_dir = self.request.run_dir
        self.notices: list[str] = []
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def run(self, on_progress: Progress) -> RunResult:
        """Run every episode (blocking; its own event loop), then write the run's ``coverage.json``.

        Raises:
            JobCancelled: ``cancel`` was called; ValueError: bad tasks, seeds or bundle, or an incomplete judge
            profile.
        """
        passed = 0

        def progress(done: int, total: int, outcome) -> None:
            nonlocal passed
            passed += bool(outcome is not None and outcome.passed)
            on_progress(done, total, passed)
            if self._cancelled.is_set():
                raise JobCancelled(f"cancelled after {done} of {total} episodes")

        return run_bench(self.request, self.settings, catalog=self.catalog, record=self.records.record_run,
                         notice=lambda text, warning: self.notices.append(text), progress=progress)
