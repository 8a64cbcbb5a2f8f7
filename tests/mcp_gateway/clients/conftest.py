"""Client-test fixtures: a ClientSet over the in-process sandbox (httpx.ASGITransport), fast limits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from mcp_gateway.clients import ClientSet, Limits, PlatformURLs, SecretStore
from sandbox import PLATFORM_IDS, KeyStore

ORIGIN = "http://sandbox"
FAST = Limits(timeout_s=10, base_delay_s=0.001, max_delay_s=0.005, rate_per_s=10_000, burst=1_000)


@pytest.fixture(scope="session")
def secrets(keys: KeyStore) -> SecretStore:
    return SecretStore({p: keys.first(p) for p in PLATFORM_IDS})


@pytest.fixture
def make_clients(secrets: SecretStore) -> Callable[..., ClientSet]:
    """ClientSet factory over any sandbox app; the test closes what it opens with ``async with``."""

    def make(app, limits: Limits = FAST, **kw) -> ClientSet:
        return ClientSet(PlatformURLs.sandbox(ORIGIN), transport=httpx.ASGITransport(app), secrets=secrets,
                         limits=limits, **kw)

    return make


@pytest.fixture
async def clients(sandbox_app, make_clients) -> AsyncIterator[ClientSet]:
    async with make_clients(sandbox_app) as cs:
        yield cs
