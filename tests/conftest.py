"""Shared fixtures: a built world, the sandbox in-process and on a real loopback port.

``KOPA_TEST_WORLD_SCALE`` (default 1.0: the full world, as CI runs it) sets the scale of the
world the platform tests use; 0.05 gives a small world for quick local iteration. Worlds are
cached under ``KOPA_TEST_DATA_DIR`` (default ``.kopa/test-data``), so only the first run
builds them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from recorder.sandbox import KeyStore, World, create_sandbox_app, ensure_world
from recorder.sandbox.loopback import LoopbackServer

REPO = Path(__file__).resolve().parent.parent
TEST_DATA_DIR = Path(os.environ.get("KOPA_TEST_DATA_DIR", REPO / ".kopa" / "test-data"))
TEST_SCALE = float(os.environ.get("KOPA_TEST_WORLD_SCALE", "1.0"))


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
