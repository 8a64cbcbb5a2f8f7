"""Readings of replayed bodies, kept per bundle version: identical to reading afresh, never crossing versions, bounded."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest

from mcp_gateway.catalog import load_catalog
from mcp_gateway.clients import ClientSet, PlatformURLs
from mcp_gateway.clients.base import filter_records
from mcp_gateway.clients.envelope import success
from mcp_gateway.clients.replay_cache import SHARED, CachedReading, ReadingCache, estimate_bytes
from mcp_gateway.gateway import REPLAY_KEY, SANDBOX_LIMITS, open_gateway
from recorder import CassetteStore, RecorderTransport, Routes
from recorder.transport import REPLAY_BODY_EXTENSION
from tests.conftest import REPO

SHIPPED = REPO / "cassettes"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def shipped():
    return CassetteStore(SHIPPED).open("kopa-default")


def replayed(bundle, row: int, stamp: bool) -> httpx.Response:
    """The response the recorder's transport serves for ``row`` (stamped as it stamps it, or not)."""
    recorded = bundle.response(row)
    offset, length = bundle._offset[row], bundle._length[row]
    extensions = {REPLAY_BODY_EXTENSION: (bundle.version, offset, length)} if stamp else {}
    return httpx.Response(recorded.status, headers=recorded.headers, content=recorded.body,
                          request=httpx.Request("GET", "http://sandbox/"), extensions=extensions)


def filter_values(reading) -> list[str]:
    """corp_name filters to try on a whole list: a full name, a part of one, a case-folded Latin one, a miss."""
    names = [r.get("corp_name") or "" for r in reading.records[:: max(1, len(reading.records) // 3)]][:3]
    return [*names, *(n[1:3] for n in names if len(n) > 2), "LG", "e", "없는회사이름", "\x00"]


async def test_every_recorded_interaction_reads_the_same_cached_and_uncached(catalog, shipped):
    """Every row of the shipped bundle, served as the recorder serves it: the page a client makes of it through the
    cache (a miss, then a hit) equals the page made by reading the body afresh; local filters (corp_name on the
    corpCode list: full names, parts, Latin letters, a miss) included."""
    serving: dict[str, httpx.Response] = {}

    def sets(readings: ReadingCache | None) -> ClientSet:
        clients = ClientSet(PlatformURLs.sandbox("http://sandbox"), limits=SANDBOX_LIMITS,  # no politeness waits
                            transport=httpx.MockTransport(lambda request: serving["response"]))
        clients.ctx.readings = readings
        return clients

    cached, fresh = sets(ReadingCache()), sets(None)
    uncached_memo: dict[tuple, object] = {}  # identical bytes, status and tool read alike: read once here
    tools, compared = shipped.column("tool"), 0
    for row, tool in enumerate(tools):
        endpoint = catalog.get(tool).endpoint
        client, plain = cached.client(endpoint.family), fresh.client(endpoint.family)
        request = client.build(endpoint, {}, page_no=1, page_size=1, key=REPLAY_KEY)
        serving["response"] = replayed(shipped, row, stamp=True)
        memo = (tool, hashlib.sha256(serving["response"].content).hexdigest(), serving["response"].status_code,
                serving["response"].headers.get("content-type"))
        if memo not in uncached_memo:
            uncached_memo[memo] = await plain._once(endpoint, request)
        reading, response = uncached_memo[memo]
        assert not isinstance(reading, CachedReading)
        for _ in range(2):  # a miss, then a hit
            got, _ = await client._once(endpoint, request)
            assert isinstance(got, CachedReading)
            assert (got.failure, got.records, got.total, got.code, got.message) == (
                reading.failure, reading.records, reading.total, reading.code, reading.message), (row, tool)
            if got.failure is not None:
                compared += 1
                continue
            params: list[dict] = [{}]
            if endpoint.local_filters:
                params += [{name: value} for name in endpoint.local_filters for value in filter_values(got)]
            for p in params:
                size = min(10, endpoint.max_page_size)
                mine = client._page(client._paged(endpoint, p, got, 1, size), serving["response"], p, REPLAY_KEY, 1, "u")
                theirs = plain._page(plain._paged(endpoint, p, reading, 1, size), response, p, REPLAY_KEY, 1, "u")
                assert mine == theirs, (row, tool, p)
                compared += 1
    assert len(tools) == len(shipped) and compared >= 2 * len(tools)
    assert cached.ctx.readings.hits >= len(tools)  # every row's second read, and rows sharing a body
    await cached.aclose()
    await fresh.aclose()


async def test_a_replayed_session_gives_the_same_results_with_and_without_the_cache(tmp_path):
    """Through the gateway (the recorder's transport stamps, the clients look up): identical ToolResults."""
    calls = [("find_dart_corp_code", {"corp_name": "비가람파트너스"}), ("find_dart_corp_code", {"corp_name": "넥스별에너지"}),
             ("find_dart_corp_code", {"corp_name": "전자", "numOfRows": 20, "pageNo": 2}),
             ("list_bike_stations", {"pageNo": 2, "numOfRows": 1000}),
             ("search_school_info", {"SCHUL_NM": "구로해백중학교"}),
             ("get_law_text", {"MST": "148533", "pageNo": 1, "numOfRows": 1000})]
    results, cache = [], ReadingCache()
    for readings in (None, cache):
        gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
        gw.clients.ctx.readings = readings
        try:
            results.append([(await gw.runtime.call(t, dict(a), "s")).structured() for t, a in calls * 2])
        finally:
            await gw.aclose()
    for uncached, cached in zip(*results, strict=True):
        uncached.pop("correlation_id", None), cached.pop("correlation_id", None)
        assert cached == uncached
    assert results[1][0]["records"] and results[1][3]["total_count"] > 1000
    assert cache.hits >= len(calls)  # the second round was served from the cache


async def test_a_second_bundle_version_is_never_served_from_the_first_ones_readings(tmp_path, shipped):
    """Two versions whose answer differs by one character at the same offset and length: each gets its own."""
    store = CassetteStore(tmp_path / "cassettes")
    rows = [i for i in shipped.interactions() if i.tool == "get_dart_company_overview"]
    first = json.loads(rows[0].body)
    name = first["corp_name"]
    changed = name[:-1] + ("가" if name[-1] != "가" else "나")  # same length in UTF-8 (3 bytes a syllable)
    assert len(changed.encode()) == len(name.encode())
    v1 = store.write("x", rows, parent=None)
    v2 = store.write("x", [rows[0].with_(body=rows[0].body.replace(name.encode(), changed.encode())), *rows[1:]],
                     parent=v1.version)
    assert v1.version != v2.version
    cache = ReadingCache()
    seen = []
    for ref in (f"x@{v1.version}", f"x@{v2.version}", f"x@{v1.version}"):
        gw = open_gateway(upstream="replay", cassettes=store.root, bundle=ref, home=tmp_path)
        gw.clients.ctx.readings = cache
        try:
            result = await gw.runtime.call("get_dart_company_overview", {"corp_code": first["corp_code"]}, "s")
        finally:
            await gw.aclose()
        seen.append(result.records[0]["corp_name"])
    assert seen == [name, changed, name]
    assert cache.hits == 1 and cache.misses == 2  # v1 read once, v2 read once, v1 again from the cache


async def test_record_mode_is_never_served_from_nor_stored_in_the_cache(tmp_path):
    """A recorded response carries no stamp: the client reads it afresh each time, and the cache stays empty."""
    body = {"status": "000", "message": "정상", "corp_code": "00126380", "corp_name": "한빛전자"}
    urls = PlatformURLs.sandbox("http://sandbox")
    transport = RecorderTransport("record", routes=Routes.from_bases(urls.bases),
                                  inner=httpx.MockTransport(lambda request: httpx.Response(200, json=body)),
                                  recording=CassetteStore(tmp_path).recording("r"))
    clients = ClientSet(urls, transport=transport)
    cache = clients.ctx.readings = ReadingCache()
    endpoint = load_catalog().get("get_dart_company_overview").endpoint
    for _ in range(2):
        page = await clients.fetch(endpoint, {"corp_code": "00126380"}, key="k")
        assert page.records[0]["corp_name"] == "한빛전자"
    await clients.aclose()
    assert len(transport.recording) == 2 and len(cache) == 0 and cache.hits == cache.misses == 0


def big_reading(n: int) -> CachedReading:
    return CachedReading(None, [{"corp_code": f"{i:08d}", "corp_name": f"회사{i}"} for i in range(n)], n)


def test_the_byte_bound_holds_as_entries_go_in_past_it():
    one = estimate_bytes(big_reading(1000))
    cache = ReadingCache(max_bytes=5 * one + one // 2)
    for i in range(40):
        cache.get_or_read(("v", i), lambda: big_reading(1000))
        assert cache.bytes <= cache.max_bytes
    assert len(cache) == 5 and cache.bytes == sum(cost for _, cost in cache._entries.values())
    assert list(cache._entries) == [("v", i) for i in range(35, 40)]  # least recently used went first
    cache.get_or_read(("v", 35), lambda: pytest.fail("a kept reading is read again"))
    cache.get_or_read(("v", 40), lambda: big_reading(1000))
    assert ("v", 35) in cache._entries and ("v", 36) not in cache._entries  # a hit refreshes its place


def test_the_entry_bound_holds_and_an_oversized_reading_is_served_but_not_kept():
    cache = ReadingCache(max_entries=3)
    for i in range(10):
        cache.get_or_read(i, lambda: success([{"a": 1}]))
    assert len(cache) == 3
    small = ReadingCache(max_bytes=1000)
    got = small.get_or_read("big", lambda: big_reading(1000))
    assert got.records and len(small) == 0 and small.bytes == 0


def test_an_index_counts_against_the_bound_and_filters_as_the_linear_scan_does():
    cache = ReadingCache()
    reading = cache.get_or_read("k", lambda: big_reading(5000))
    before = cache.bytes
    assert [r["corp_code"] for r in reading.filtered({"corp_name": "회사123"}, {"corp_name": "like"})] == [
        f"{i:08d}" for i in range(5000) if "회사123" in f"회사{i}"]
    assert reading.filtered({"corp_code": "00000042"}, {"corp_code": "exact"}) == [reading.records[42]]
    assert reading.filtered({"corp_name": "회사5", "corp_code": "00000042"},
                            {"corp_name": "like", "corp_code": "exact"}) == []
    assert reading.filtered({"corp_name": ""}, {"corp_name": "like"}) == reading.records
    assert cache.bytes > before  # both indexes were counted


def test_estimate_is_near_the_measured_footprint():
    import tracemalloc

    tracemalloc.start()
    reading = big_reading(20_000)
    measured, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert 0.75 * measured <= estimate_bytes(reading) <= 1.25 * measured


def test_the_process_wide_cache_is_the_default():
    assert ClientSet(PlatformURLs.sandbox("http://sandbox")).ctx.readings is SHARED


def test_local_filters_on_an_uncached_reading_keep_the_records_that_match_in_order():
    records = [{"name": "Seoul Station", "code": "01"}, {"name": "seoul tower", "code": 2},
               {"name": None, "code": "01"}, {"name": "Busan", "code": "01"}]
    filters = {"name": "like", "code": "exact"}
    assert filter_records(records, {"name": "SEOUL"}, filters) == records[:2]  # like: case-insensitive substring
    assert filter_records(records, {"name": "seoul", "code": "01"}, filters) == [records[0]]  # every filter holds
    assert filter_records(records, {"code": 2}, filters) == [records[1]]  # exact compares the texts
    assert filter_records(records, {"name": "", "code": None}, filters) == records  # no value: no filter
    assert filter_records(records, {"other": "x"}, filters) == records
    assert filter_records(records, {"name": "tower"}, filters) == [records[1]]
