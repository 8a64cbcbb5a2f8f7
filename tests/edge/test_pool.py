"""Where the paths run does not change what they do: worker processes and Ray tasks give the in-process run.

Each executor gets the same two-edge run of tests/edge/test_phase_a_run.py (a known-good and a known-bad
chain over the sandbox) and must write the same trials and posteriors, call for call.
"""

from __future__ import annotations

import asyncio
import functools

import pytest

from edge.graph.pool import PathJob, ProcessPaths, RayPaths, _chunks
from mcp_gateway.gateway import open_gateway
from tests.conftest import TEST_DATA_DIR, sandbox_upstream
from tests.edge.test_phase_a_run import _run


def _open_gateway(home):
    """The opener a worker process calls: module-level, so the partial pickles by reference."""
    return open_gateway(upstream="sandbox", sandbox=sandbox_upstream(), home=home, profile="chat")


OPENER = functools.partial(_open_gateway, TEST_DATA_DIR)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return asyncio.run(_run(tmp_path_factory.mktemp("pool") / "in-process.duckdb"))


def _same_run(store, reference) -> None:
    assert store.trials() == reference.trials() and len(store.trials()) > 20
    assert store.posteriors(live_only=False) == reference.posteriors(live_only=False)
    assert store.inputs_seen() == reference.inputs_seen()


def test_worker_processes_give_the_in_process_run(reference, tmp_path):
    store = asyncio.run(_run(tmp_path / "processes.duckdb",
                             executor=lambda plans: ProcessPaths(OPENER, plans, workers=2, concurrency=3)))
    _same_run(store, reference)


def test_ray_tasks_give_the_in_process_run(reference, tmp_path):
    store = asyncio.run(_run(tmp_path / "ray.duckdb",
                             executor=lambda plans: RayPaths(OPENER, plans, address="local", num_cpus=1)))  # one worker: same path, less start-up
    _same_run(store, reference)


def test_chunks_keep_every_job_once_in_order():
    jobs = [PathJob((), None, (0, m)) for m in range(10)]
    parts = _chunks(jobs, 4)
    assert [len(p) for p in parts] == [3, 3, 2, 2]
    assert [j for p in parts for j in p] == jobs
    assert _chunks(jobs[:2], 8) == [jobs[:1], jobs[1:2]]  # never an empty chunk


def test_a_bad_worker_count_is_refused():
    with pytest.raises(ValueError, match="workers must be at least 1"):
        ProcessPaths(OPENER, {}, workers=0)
