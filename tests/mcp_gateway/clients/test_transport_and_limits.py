"""Base URLs as configuration (live hosts, sandbox mounts, real loopback), and per-platform limits."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from mcp_gateway.catalog.spec import Endpoint
from mcp_gateway.clients import ClientSet, Limits, PlatformURLs
from mcp_gateway.clients.config import MAIN
from mcp_gateway.clients.throttle import PlatformGates, TokenBucket
from mcp_gateway.runtime.result import Outcome
from sandbox import PLATFORM_IDS

from .endpoints import (
    DART_LIST,
    KRX_PRICES,
    NEIS_SCHOOLS,
    ONE_PER_PLATFORM,
    SCHOOLINFO_BASICS,
    SEOUL_BIKES,
)


def test_live_and_sandbox_urls_cover_every_platform():
    live, sandbox = PlatformURLs.live(), PlatformURLs.sandbox("http://127.0.0.1:8088/")
    assert {p for p, _ in live.bases} == set(PLATFORM_IDS) == {p for p, _ in sandbox.bases}
    assert live.url(DART_LIST) == "https://opendart.fss.or.kr/api/list.json"
    assert live.url(SCHOOLINFO_BASICS) == "https://www.schoolinfo.go.kr/openApi.do"
    assert live.base("seoul", MAIN) == "http://openapi.seoul.go.kr:8088"
    assert sandbox.url(KRX_PRICES) == ("http://127.0.0.1:8088/datago/1160100/service/"
                                       "GetStockSecuritiesInfoService/getStockPriceInfo")
    assert sandbox.url(NEIS_SCHOOLS) == "http://127.0.0.1:8088/neis/hub/schoolInfo"
    with pytest.raises(KeyError, match="nowhere"):
        live.base("nowhere")


@pytest.mark.parametrize("target", sorted(ONE_PER_PLATFORM))
async def test_live_urls_reach_the_sandbox_unchanged(sandbox_app, secrets, target):
    """The real hosts, answered by the sandbox through the injected transport (its Host dispatch)."""
    endpoint, params = ONE_PER_PLATFORM[target]
    async with ClientSet(PlatformURLs.live(), transport=httpx.ASGITransport(sandbox_app), secrets=secrets) as cs:
        page = await cs.fetch(endpoint, params, page_no=1, page_size=3)
    assert page.outcome.ok and len(page.records) == 3, page.message
    assert page.url.startswith(PlatformURLs.live().base(endpoint.platform, endpoint.base))


async def test_real_loopback_http_with_the_default_transport(sandbox_origin, secrets):
    async with ClientSet(PlatformURLs.sandbox(sandbox_origin), secrets=secrets) as cs:
        pages = await asyncio.gather(*(cs.fetch(e, p, page_no=1, page_size=2) for e, p in ONE_PER_PLATFORM.values()))
    assert all(p.outcome.ok and len(p.records) == 2 for p in pages), [p.message for p in pages]


async def test_connection_refused_is_endpoint_unavailable(secrets):
    limits = Limits(max_attempts=2, base_delay_s=0.001, timeout_s=5)
    async with ClientSet(PlatformURLs.sandbox("http://127.0.0.1:9"), secrets=secrets, limits=limits) as cs:
        page = await cs.fetch(SEOUL_BIKES, {}, page_no=1, page_size=2)
    assert (page.outcome, page.attempts, page.http_status) == (Outcome.ENDPOINT_UNAVAILABLE, 2, None)


async def test_internal_tools_have_no_client(clients: ClientSet):
    with pytest.raises(ValueError, match="no platform client for family 'internal'"):
        await clients.fetch(Endpoint(platform="dart", family="internal", path="x"), {})


async def test_token_bucket_paces_requests():
    bucket = TokenBucket(rate=50, burst=2)
    started = time.monotonic()
    for _ in range(7):  # 2 from the burst, 5 paced at 20 ms
        await bucket.take()
    assert time.monotonic() - started >= 0.08  # paced: the burst cannot be exceeded (no upper bound: load only slows it)


async def test_gates_cap_concurrency_per_platform():
    gates = PlatformGates(Limits(concurrency=2, rate_per_s=10_000, burst=100))
    in_flight = {"dart": 0, "law": 0}
    peak = {"dart": 0, "law": 0}

    async def request(platform: str) -> None:
        async with gates.slot(platform):
            in_flight[platform] += 1
            peak[platform] = max(peak[platform], in_flight[platform])
            await asyncio.sleep(0.01)
            in_flight[platform] -= 1

    await asyncio.gather(*(request(p) for p in ("dart", "law") for _ in range(6)))
    assert peak == {"dart": 2, "law": 2}  # each platform capped on its own


async def test_platform_rate_applies_to_real_requests(sandbox_app, make_clients):
    limits = Limits(rate_per_s=1000, burst=1, platform_rates={"seoul": 40})
    async with make_clients(sandbox_app, limits) as clients:
        started = time.monotonic()
        pages = await asyncio.gather(*(clients.fetch(SEOUL_BIKES, {}, page_no=1, page_size=1) for _ in range(5)))
        elapsed = time.monotonic() - started
    assert all(p.outcome.ok for p in pages) and elapsed >= 0.09  # 4 waits of 25 ms after the first token
