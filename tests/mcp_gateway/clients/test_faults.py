"""Injected sandbox faults on every platform, classified; retries only for environmental outcomes."""

from __future__ import annotations

import random
import time

import pytest

from mcp_gateway.clients import Limits
from mcp_gateway.runtime.result import Outcome
from sandbox import FaultProfile, FaultRates, create_sandbox_app

from .conftest import FAST
from .endpoints import DART_LIST, NEIS_CLASSES, ONE_PER_PLATFORM

# What each platform's fault looks like once classified. data.go.kr renders "unavailable" as gateway
# code 04 (HTTP_ERROR), which the gateway vocabulary files under server errors.
UNAVAILABLE = {p: Outcome.SERVER_ERROR if p in ("krx", "kdic", "hrdk") else Outcome.ENDPOINT_UNAVAILABLE
               for p in ONE_PER_PLATFORM}
EXPECTED = {
    "rate_limit": dict.fromkeys(ONE_PER_PLATFORM, Outcome.RATE_LIMIT),
    "server_error": dict.fromkeys(ONE_PER_PLATFORM, Outcome.SERVER_ERROR),
    "unavailable": UNAVAILABLE,
    "malformed": dict.fromkeys(ONE_PER_PLATFORM, Outcome.SERVER_ERROR),  # undecodable body: environmental
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def faulty(request, world, keys):
    """(fault kind, sandbox app injecting it on every request of every platform)."""
    profile = FaultProfile(default=FaultRates(**{request.param: 1.0}))
    return request.param, create_sandbox_app(world, keys, profile)


@pytest.mark.parametrize("target", sorted(ONE_PER_PLATFORM))
async def test_fault_classified_and_retried(faulty, target, make_clients):
    kind, app = faulty
    endpoint, params = ONE_PER_PLATFORM[target]
    async with make_clients(app) as clients:
        page = await clients.fetch(endpoint, params, page_no=1, page_size=10)
    assert page.outcome is EXPECTED[kind][target], (page.code, page.message)
    assert page.attempts == FAST.max_attempts  # every one of these is retryable: retried, then surfaced
    assert page.records == [] and page.message


async def test_hang_past_the_timeout_is_timeout(world, keys, make_clients):
    app = create_sandbox_app(world, keys, FaultProfile(default=FaultRates(hang=1.0), hang_seconds=5))
    limits = Limits(timeout_s=0.1, max_attempts=2, base_delay_s=0.001, rate_per_s=1000)
    started = time.monotonic()
    async with make_clients(app, limits) as clients:
        for endpoint, params in ONE_PER_PLATFORM.values():
            page = await clients.fetch(endpoint, params, page_no=1, page_size=10)
            assert (page.outcome, page.attempts, page.http_status) == (Outcome.TIMEOUT, 2, None)
    assert time.monotonic() - started < 4  # nobody waited for the 5 s hang


async def test_rate_limit_attempts_follow_max_attempts(world, keys, make_clients):
    app = create_sandbox_app(world, keys, FaultProfile(platforms={"dart": FaultRates(rate_limit=1.0)}))
    async with make_clients(app, Limits(max_attempts=5, base_delay_s=0.001, rate_per_s=1000)) as clients:
        page = await clients.fetch(DART_LIST, {}, page_no=1, page_size=10)
    assert (page.outcome, page.code, page.attempts) == (Outcome.RATE_LIMIT, "020", 5)


async def test_flaky_upstream_recovers_within_the_retries(world, keys, make_clients):
    """Half the requests fail: some calls succeed only on a later attempt, and all end in success."""
    app = create_sandbox_app(world, keys, FaultProfile(seed=3, platforms={"dart": FaultRates(server_error=0.5)}))
    async with make_clients(app, Limits(max_attempts=8, base_delay_s=0.001, rate_per_s=1000)) as clients:
        pages = [await clients.fetch(DART_LIST, {}, page_no=1, page_size=5) for _ in range(12)]
    assert all(p.outcome is Outcome.GENERIC_SUCCESS for p in pages)
    assert any(p.attempts > 1 for p in pages)


async def test_structural_and_auth_failures_are_not_retried(sandbox_app, make_clients):
    async with make_clients(sandbox_app, Limits(max_attempts=5, base_delay_s=0.001)) as clients:
        missing = await clients.fetch(NEIS_CLASSES, {}, page_no=1, page_size=10)
        bad = await clients.fetch(DART_LIST, {"bgn_de": "x"}, page_no=1, page_size=10)
        denied = await clients.fetch(DART_LIST, {}, page_no=1, page_size=10, key="0" * 40)
    assert [(p.outcome, p.attempts) for p in (missing, bad, denied)] == [
        (Outcome.MISSING_FIELD, 1), (Outcome.SCHEMA_MISMATCH, 1), (Outcome.AUTH_ERROR, 1)]


class RecordingRandom(random.Random):
    """A seeded Random that remembers the jitter ceilings it was asked for and the delays it gave."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.ceilings: list[float] = []
        self.delays: list[float] = []

    def uniform(self, a: float, b: float) -> float:
        self.ceilings.append(b)
        self.delays.append(super().uniform(a, b))
        return self.delays[-1]


async def test_backoff_is_exponential_with_seeded_full_jitter(world, keys, make_clients):
    app = create_sandbox_app(world, keys, FaultProfile(platforms={"dart": FaultRates(rate_limit=1.0)}))
    limits = Limits(max_attempts=4, base_delay_s=0.002, max_delay_s=0.006, rate_per_s=1000)
    runs = []
    for _ in range(2):
        rng = RecordingRandom(7)
        async with make_clients(app, limits, rng=rng) as clients:
            await clients.fetch(DART_LIST, {}, page_no=1, page_size=10)
        assert rng.ceilings == [0.002, 0.004, 0.006]  # doubling, capped; none after the last attempt
        assert all(0 <= d <= c for d, c in zip(rng.delays, rng.ceilings))
        runs.append(rng.delays)
    assert runs[0] == runs[1]  # same seed, same jitter
