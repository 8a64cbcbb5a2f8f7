"""Fixtures for the episode tests: the hand-made tasks, their golden calls recorded once, replay gateways.

The golden trajectories are recorded from the sandbox world the other tests use (``KOPA_TEST_DATA_DIR``,
``KOPA_TEST_WORLD_SCALE``) into a fresh cassettes folder, by running the oracle once in record mode;
every test then replays that bundle, as a benchmark run does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bench.agents import OracleAgent
from bench.episode import EpisodeOutcome, run_episode
from bench.task import Task, load_tasks
from mcp_gateway.gateway import Gateway, open_gateway
from recorder import CassetteStore
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

EPISODE_TASKS = Path(__file__).parent / "data" / "episode_tasks.jsonl"
BUNDLE = "episode-tests"


@pytest.fixture(scope="session")
def episode_tasks() -> dict[str, Task]:
    return {task.id: task for task in load_tasks(EPISODE_TASKS)}


@pytest.fixture(scope="session")
def recorded_bundle(tmp_path_factory, episode_tasks) -> tuple[Path, dict[str, EpisodeOutcome]]:
    """(cassettes folder, the oracle's outcome per task while recording)."""
    cassettes = tmp_path_factory.mktemp("episode-cassettes")

    async def record() -> dict[str, EpisodeOutcome]:
        gateway = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, profile="bench", mode="record",
                               cassettes=cassettes, bundle=BUNDLE)
        try:
            return {tid: await run_episode(task, OracleAgent(), gateway, seed=0)
                    for tid, task in episode_tasks.items()}
        finally:
            await gateway.aclose()  # commits the bundle

    return cassettes, asyncio.run(record())


def replay_gateway(cassettes: Path) -> Gateway:
    return open_gateway(home=TEST_DATA_DIR, profile="bench", mode="replay", cassettes=cassettes, bundle=BUNDLE)


@pytest.fixture
async def gateway(recorded_bundle) -> AsyncIterator[Gateway]:
    """A strict-replay gateway over the recorded bundle (no world, no upstream)."""
    gw = replay_gateway(recorded_bundle[0])
    try:
        yield gw
    finally:
        await gw.aclose()


def pin_tasks(cassettes: Path, folder: Path, domains: dict[str, str] | None = None) -> tuple[Path, Path, str]:
    """(cassettes folder, a task file in ``folder`` pinned to the recorded version, that bundle ref).

    The checked-in file names a placeholder version; ``domains`` moves tasks (by id) to other domains, so that
    a run has more than one.
    """
    ref = f"{BUNDLE}@{CassetteStore(cassettes).head(BUNDLE)}"
    lines = [json.loads(line) for line in EPISODE_TASKS.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps({**t, "bundle": ref, "domain": (domains or {}).get(t["id"], t["domain"])},
                                       ensure_ascii=False) + "\n" for t in lines), encoding="utf-8")
    return cassettes, path, ref


@pytest.fixture
def pinned(recorded_bundle, tmp_path) -> tuple[Path, Path, str]:
    """(cassettes folder, a task file pinned to the recorded version, that bundle ref)."""
    return pin_tasks(recorded_bundle[0], tmp_path)
