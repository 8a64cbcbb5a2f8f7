"""Replayed results encoded once (``replay_cache.ResultCache`` in ``GatewayHandlers``) and the server's warm-up."""

from __future__ import annotations

import json
import tracemalloc
from types import SimpleNamespace

import mcp_types as types
from bench.agents.base import resolve_placeholders
from mcp_gateway.catalog import load_catalog
from mcp_gateway.catalog.spec import ParamKind
from mcp_gateway.clients.replay_cache import ReadingCache, ResultCache, estimate_result_bytes
from mcp_gateway.gateway import REPLAY_KEY, open_gateway
from mcp_gateway.server.mcp_server import GatewayHandlers, encode
from mcp_gateway.server.telemetry import Telemetry
from mcp_gateway.server.toolset import ToolSet
from mcp_gateway.server.warm import warm_up
from recorder import CassetteStore
from tests.conftest import REPO

SHIPPED = REPO / "cassettes"
TASKS = REPO / "bench" / "tasks" / "kopa-bench.jsonl"
CTX = SimpleNamespace(request=None, request_id=1)  # stdio / in-process: the handlers' own local session


def handlers(gw, results: ResultCache) -> GatewayHandlers:
    return GatewayHandlers(gw.runtime, ToolSet.everything(), page_size=100, telemetry=Telemetry(), results=results)


async def call(h: GatewayHandlers, tool: str, args: dict) -> types.CallToolResult:
    return await h.call_tool(CTX, types.CallToolRequestParams(name=tool, arguments=args))


def wire(result: types.CallToolResult) -> str:
    """What goes on the wire less the per-call correlation id."""
    return result.model_dump_json(by_alias=True, exclude_none=True, exclude={"meta"})


def golden_calls() -> list[tuple[str, dict]]:
    """Every golden call of the shipped task set, for the chat profile (the key parameter is the gateway's)."""
    catalog, calls = load_catalog(), []
    for line in TASKS.read_text(encoding="utf-8").splitlines():
        for golden in json.loads(line)["golden_actions"]:
            spec = catalog.get(golden["tool"])
            keys = {p.name for p in spec.params if p.kind is ParamKind.API_KEY}
            calls.append((golden["tool"], {k: v for k, v in golden["args"].items() if k not in keys}))
    return calls


async def test_every_golden_call_replays_byte_identical_with_and_without_the_caches(tmp_path):
    """Each golden call of the task set (714, 569 of them replayed from the bundle), twice: through a gateway with
    no cache at all and through one with both caches (a miss, then a hit), the same bytes on the wire."""
    calls = golden_calls()
    plain_gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
    cached_gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
    plain_gw.clients.ctx.readings = None  # read every body afresh: no replay key, so no encoded result either
    cached_gw.clients.ctx.readings = ReadingCache()
    plain, results = handlers(plain_gw, ResultCache()), ResultCache()
    cached = handlers(cached_gw, results)
    try:
        for tool, args in calls:
            for _ in range(2):  # recorded answers repeat in recorded order: both gateways ask the same sequence
                theirs, mine = await call(plain, tool, dict(args)), await call(cached, tool, dict(args))
                assert wire(mine) == wire(theirs), (tool, args)
    finally:
        await plain_gw.aclose()
        await cached_gw.aclose()
    assert len(plain.results) == 0 and plain.results.hits == 0
    assert results.hits >= 500 and len(results) > 100  # the second of each pair, and repeated golden calls
    assert cached_gw.transport.stats.hits == plain_gw.transport.stats.hits  # coverage counts are unchanged


PAGED = [("list_bike_stations", {"pageNo": 3, "numOfRows": 5}), ("list_bike_stations", {"pageNo": 2, "numOfRows": 999}),
         ("list_bike_stations", {"pageNo": 90000, "numOfRows": 7}),  # past the end
         ("find_dart_corp_code", {"corp_name": "전자", "numOfRows": 7, "pageNo": 3}),
         ("get_law_text", {"MST": "148533", "pageNo": 2, "numOfRows": 7}),
         ("search_school_info", {"SCHUL_NM": "구로해백중학교", "pageNo": 1, "numOfRows": 3})]


async def test_pages_made_of_recorded_pages_replay_byte_identical_through_the_caches(tmp_path):
    """Pages never recorded as such (assembled from recorded pages, or past the end): the same bytes cached or not."""
    plain_gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
    cached_gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
    plain_gw.clients.ctx.readings, cached_gw.clients.ctx.readings = None, ReadingCache()
    results = ResultCache()
    plain, cached = handlers(plain_gw, ResultCache()), handlers(cached_gw, results)
    try:
        for tool, args in PAGED:
            for _ in range(2):
                theirs, mine = await call(plain, tool, dict(args)), await call(cached, tool, dict(args))
                assert wire(mine) == wire(theirs), (tool, args)
    finally:
        await plain_gw.aclose()
        await cached_gw.aclose()
    assert results.hits >= len(PAGED) - 1 and len(results) >= len(PAGED) - 1


async def test_a_second_bundle_version_is_never_served_from_the_first_ones_results(tmp_path):
    """Two versions differing by one character at the same offset and length, one cache for both: each its own."""
    shipped = CassetteStore(SHIPPED).open("kopa-default")
    store = CassetteStore(tmp_path / "cassettes")
    rows = [i for i in shipped.interactions() if i.tool == "get_dart_company_overview"]
    first = json.loads(rows[0].body)
    name = first["corp_name"]
    changed = name[:-1] + ("가" if name[-1] != "가" else "나")
    v1 = store.write("x", rows, parent=None)
    v2 = store.write("x", [rows[0].with_(body=rows[0].body.replace(name.encode(), changed.encode())), *rows[1:]],
                     parent=v1.version)
    readings, results, seen = ReadingCache(), ResultCache(), []
    for ref in (f"x@{v1.version}", f"x@{v2.version}", f"x@{v1.version}"):
        gw = open_gateway(upstream="replay", cassettes=store.root, bundle=ref, home=tmp_path)
        gw.clients.ctx.readings = readings
        try:
            result = await call(handlers(gw, results), "get_dart_company_overview", {"corp_code": first["corp_code"]})
        finally:
            await gw.aclose()
        seen.append((result.structured_content["records"][0]["corp_name"], json.loads(result.content[0].text)))
    assert [s[0] for s in seen] == [name, changed, name]
    assert all(text["records"][0]["corp_name"] == got for got, text in seen)
    assert results.misses == 2 and results.hits == 1  # v1 encoded once, v2 once, v1 again from the cache


async def test_no_key_nor_token_is_in_a_cache_key(tmp_path):
    """Bench profile: the session's key token and the gateway's placeholder key stay out of every key."""
    gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path, profile="bench")
    results = ResultCache()
    h = handlers(gw, results)
    try:
        token = (await call(h, "get_seoul_api_key", {})).structured_content["records"][0]["api_key"]
        for _ in range(2):
            result = await call(h, "list_bike_stations", {"KEY": token, "pageNo": 1, "numOfRows": 5})
            assert not result.is_error
    finally:
        await gw.aclose()
    assert results.hits == 1 and len(results) == 1
    keys = repr(list(results._entries))
    assert token not in keys and REPLAY_KEY not in keys


def test_the_result_cache_bounds_hold():
    results = ResultCache(max_entries=3)
    for i in range(10):
        results.get_or_encode(i, lambda: encode({"outcome": "generic_success", "records": [{"a": 1}]}, is_error=False))
    assert len(results) == 3 and list(results._entries) == [7, 8, 9]
    big = encode({"outcome": "generic_success", "records": [{"a": "x" * 100}] * 1000}, is_error=False)
    one = estimate_result_bytes(big)
    results = ResultCache(max_bytes=3 * one + one // 2)
    for i in range(10):
        results.get_or_encode(i, lambda: big)
        assert results.bytes <= results.max_bytes
    assert len(results) == 3
    tiny = ResultCache(max_bytes=100)
    assert tiny.get_or_encode("k", lambda: big) is big and len(tiny) == 0  # served, not kept


def test_the_result_estimate_is_near_the_measured_footprint():
    tracemalloc.start()
    structured = {"outcome": "generic_success", "total_count": 20_000,
                  "records": [{"corp_code": f"{i:08d}", "corp_name": f"회사{i}", "stock_code": None} for i in range(20_000)]}
    encoded = encode(structured, is_error=False)
    measured, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert 0.75 * measured <= estimate_result_bytes(encoded) <= 1.25 * measured


async def test_warm_up_reads_the_whole_result_bodies_ahead_and_changes_no_result(tmp_path):
    """After warm_up, the first find_dart_corp_code is served from the reading cache, with the uncached result."""
    args = {"corp_name": "전자", "numOfRows": 20, "pageNo": 2}
    got = []
    for warm in (False, True):
        gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path)
        readings = gw.clients.ctx.readings = ReadingCache() if warm else None
        try:
            if warm:
                report = warm_up(gw.runtime, freeze=False)  # never freeze the test process's collector
                assert report.primed > 0 and report.expression and report.frozen == 0
                misses = readings.misses
            got.append(wire(await call(handlers(gw, ResultCache()), "find_dart_corp_code", dict(args))))
            if warm:
                assert readings.misses == misses and readings.hits >= 1  # read ahead: the call missed nothing
        finally:
            await gw.aclose()
    assert got[0] == got[1] and json.loads(got[0])["structuredContent"]["records"]


async def test_a_bench_profile_session_replays_alike_through_the_result_cache(tmp_path):
    """Bench profile, the key token resolved into the golden call as an agent does: the data calls' bytes are the
    same cached or not (each session's token differs; it is in no result of a data call, nor in any cache key)."""
    calls = [("get_dart_api_key", {}), ("find_dart_corp_code", {"KEY": "{dart_key}", "corp_name": "삼성"})]
    outs = []
    for results in (ResultCache(max_entries=0), ResultCache()):
        gw = open_gateway(upstream="replay", cassettes=SHIPPED, bundle="kopa-default", home=tmp_path, profile="bench")
        try:
            h, context, data = handlers(gw, results), {}, []
            for tool, args in calls * 2:
                result = await call(h, tool, resolve_placeholders(args, context))
                if tool == "get_dart_api_key":
                    context["dart_key"] = result.structured_content["records"][0]["api_key"]
                else:
                    data.append(wire(result))
            outs.append(data)
        finally:
            await gw.aclose()
    assert outs[0] == outs[1] and len(outs[0]) == 2 and "삼성" in outs[0][0]
