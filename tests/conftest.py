"""Shared fixtures: a built world, the sandbox in-process and on a real loopback port.

``KOPA_TEST_WORLD_SCALE`` (default 1.0: the full world, as CI runs it) sets the scale of the
world the platform tests use; 0.05 gives a small world for quick local iteration. Worlds are
cached under ``KOPA_TEST_DATA_DIR`` (default ``~/.cache/kopa/test-data``, shared by every clone on
the machine, like pip's cache) in files named by seed, version, scale and generator version: only
the first run after a generator change builds them (~70 s each on 2 cores).

Under pytest-xdist (``make test`` runs ``-n 2``) the controller starts building the v1 and v2
worlds in two background processes before the workers start; tests that need no world run
meanwhile, and a test that needs one waits on the world's build lock (``ensure_world``).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from sandbox import InProcessSandbox, KeyStore, World, create_sandbox_app, ensure_world
from sandbox.loopback import LoopbackServer

REPO = Path(__file__).resolve().parent.parent
TEST_DATA_DIR = Path(os.environ.get("KOPA_TEST_DATA_DIR", Path.home() / ".cache" / "kopa" / "test-data"))
TEST_SCALE = float(os.environ.get("KOPA_TEST_WORLD_SCALE", "1.0"))
PREBUILT_VERSIONS = ("v1", "v2")
_prebuilds: list[multiprocessing.Process] = []


def _build(version: str) -> None:
    ensure_world(TEST_DATA_DIR, version=version, scale=TEST_SCALE)


def pytest_configure(config: pytest.Config) -> None:
    """In the xdist controller only: build the test worlds in parallel while the workers start."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no pytest state, no inherited locks
    for version in PREBUILT_VERSIONS:
        process = ctx.Process(target=_build, args=(version,), name=f"world-{version}", daemon=True)
        process.start()
        _prebuilds.append(process)


def pytest_unconfigure(config: pytest.Config) -> None:
    for process in _prebuilds:
        process.join()


def sandbox_upstream(version: str = "v1") -> InProcessSandbox:
    """The test world as a gateway's in-process upstream (the gateway opens it on first use, closes it on close)."""
    return InProcessSandbox(TEST_DATA_DIR, version=version, scale=TEST_SCALE)


def shared_tiny_smollm2() -> Path:
    """SmolLM2's shape cut to 2 layers, random weights (seed 0), the real tokenizer: built once per machine under
    TEST_DATA_DIR (a file lock for the xdist workers; built aside and renamed, so a half-built folder is never
    read) and only read by the tests that use it."""
    import fcntl
    import shutil

    from models.checkpoints import is_checkpoint, tiny_checkpoint

    folder = TEST_DATA_DIR / "models" / "smollm2-tiny-2-layers-seed-0"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_checkpoint(folder):
            aside = folder.with_name(folder.name + f".building-{os.getpid()}")
            shutil.rmtree(aside, ignore_errors=True)
            tiny_checkpoint(aside, layers=2, seed=0)
            shutil.rmtree(folder, ignore_errors=True)
            aside.rename(folder)
    return folder


@pytest.fixture(scope="session")
def world() -> Iterator[World]:
    """The v1 world the platform tests run against."""
    w = World.open(ensure_world(TEST_DATA_DIR, version="v1", scale=TEST_SCALE))
    yield w
    w.close()


@pytest.fixture(scope="session")
def keys() -> KeyStore:
    return KeyStore.default()


@pytest.fixture(scope="session")
def sandbox_app(world: World, keys: KeyStore):
    return create_sandbox_app(world, keys)


@pytest.fixture(scope="session")
def client(sandbox_app) -> Iterator[TestClient]:
    """In-process client (ASGI, no socket) for quick shape checks."""
    with TestClient(sandbox_app, base_url="http://sandbox") as c:
        yield c


@pytest.fixture(scope="session")
def sandbox_origin(sandbox_app) -> Iterator[str]:
    """Origin (http://127.0.0.1:PORT) of the sandbox served over a real loopback socket."""
    with LoopbackServer(sandbox_app) as srv:
        yield srv.origin


@pytest.fixture(scope="session")
def http(sandbox_origin: str) -> Iterator[httpx.Client]:
    """httpx client against the loopback sandbox; use platform mounts as paths (e.g. /dart/api/list.json)."""
    with httpx.Client(base_url=sandbox_origin, timeout=30, headers={"User-Agent": "kopa-tests"}) as c:
        yield c
