"""Drift reports: the sandbox's v1 → v2 changelog is what a report of two recordings says, no more, no less.

The same calls are recorded through the gateway against world v1 (bundle A) and world v2
(bundle B). Each call touches an item of v2's changelog, or is a control call that must show
no drift. Every changelog item is mapped to the report entries that show it, and every entry
back to a changelog item.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_gateway.cassette_reader import cassette_reader
from mcp_gateway.gateway import open_gateway
from recorder import Bundle, CassetteStore, Interaction, KeyScanner, Origin, RecorderTransport, Routes
from recorder.drift import DriftEntry, compare, live_sample, queries
from recorder.transport import TOOL_EXTENSION
from sandbox import KeyStore, World, create_sandbox_app, default_keys, ensure_world
from tests.conftest import TEST_DATA_DIR, TEST_SCALE, sandbox_upstream

V2_DAY = "20261201"
HWASEONG, DISTRICTS = "41590", {"41591", "41593", "41595", "41597"}
BILL_TOOLS = ("search_member_sponsored_bills", "search_all_bills")
# search_all_bills (TVBPMBILL11) shows two stored bill columns under other names, one of them twice
ALL_BILLS_ALIASES = {"PROC_RESULT_CD": "PROC_RESULT", "COMMITTEE_PROC_DT": "CMT_PROC_DT"}
CONTROL_TOOLS = ("search_laws", "search_subway_stations", "list_tollbooths", "list_deposit_insured_institutions")


def calls(bill_no: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("get_stock_price_trend", {"beginBasDt": "20261130"}),  # krx: a new trading day
        ("search_dart_disclosures", {"bgn_de": "20261130", "end_de": V2_DAY}),  # dart: new disclosures
        ("search_member_sponsored_bills", {"AGE": "22"}),  # assembly: bills decided
        ("search_all_bills", {"AGE": "22"}),  # ... every proposer kind (one decided bill is the government's)
        ("get_rest_area_fuel_prices", {}),  # ex: fuel prices moved
        ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}),  # edu: a field renamed, one added
        ("get_bill_detail", {"BILL_NO": bill_no}),  # assembly: ALLBILL removed
        ("gg_aed_location", {"SIGUN_CD": HWASEONG}),  # gg: the code split away
        ("gg_aed_location", {}),  # gg: ... and the records recoded
        ("search_laws", {"query": "민법"}),  # controls
        ("search_subway_stations", {}),
        ("list_tollbooths", {}),
        ("list_deposit_insured_institutions", {}),
    ]


async def record(version: str, name: str, cassettes: Path, bill_no: str) -> None:
    gateway = open_gateway(sandbox=sandbox_upstream(version), home=TEST_DATA_DIR, mode="record",
                           cassettes=cassettes, bundle=name)
    try:
        for tool, args in calls(bill_no):
            result = await gateway.runtime.call(tool, args, "drift-test")
            assert version == "v2" or result.outcome.ok, f"{tool} {args} failed on v1: {result.message}"
    finally:
        await gateway.aclose()


@pytest.fixture(scope="module")
def v2_world() -> World:
    w = World.open(ensure_world(TEST_DATA_DIR, version="v2", scale=TEST_SCALE))
    yield w
    w.close()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory, world: World) -> tuple[Bundle, Bundle]:
    cassettes = tmp_path_factory.mktemp("drift-cassettes")
    bill_no = world.scalar('SELECT min("BILL_NO") FROM assembly_bill WHERE "AGE" = ?', ["22"])
    asyncio.run(record("v1", "a", cassettes, bill_no))
    asyncio.run(record("v2", "b", cassettes, bill_no))
    store = CassetteStore(cassettes)
    return store.open("a"), store.open("b")


@pytest.fixture(scope="module")
def reader():
    return cassette_reader()


@pytest.fixture(scope="module")
def report(bundles, reader):
    return compare(*bundles, reader)


def digits(value: Any) -> int:
    """A price as the expressway API prints it ("1,670원") or as the world stores it (1670)."""
    return int(re.sub(r"[^\d-]", "", str(value)))


def _value(value: Any) -> str | None:
    return None if value is None else str(value)


class Changelog:
    """v2's changelog items, indexed the way report entries name them."""

    def __init__(self, world: World):
        self.items = world.changelog()
        self.by_kind: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for item in self.items:
            self.by_kind[(item["kind"], item["platform"])].append(item)
        self.krx = {(i["key"]["basDt"], i["key"]["srtnCd"]) for i in self.by_kind[("record_added", "krx")]}
        self.dart = {i["key"]["rcept_no"] for i in self.by_kind[("record_added", "dart")]}
        self.bills = {(i["key"]["BILL_ID"], i["field"]): (_value(i["old"]), _value(i["new"]))
                      for i in self.by_kind[("record_changed", "assembly")]}
        # curStateStation names rest areas by serviceAreaCode; the changelog by the table key stdRestCd
        area = {r["s"]: r["a"] for r in world.rows('SELECT "stdRestCd" AS s, "serviceAreaCode" AS a FROM ex_fuel')}
        self.fuel = {(area[i["key"]["stdRestCd"]], i["field"]): (i["old"], i["new"])
                     for i in self.by_kind[("record_changed", "ex")]}


def test_changelog_is_what_the_test_expects(v2_world):
    """The mapping below knows these kinds of change; a new kind must be mapped before it passes."""
    kinds = Counter((i["kind"], i["platform"]) for i in v2_world.changelog())
    assert set(kinds) == {("record_added", "krx"), ("record_added", "dart"), ("record_changed", "assembly"),
                          ("record_changed", "ex"), ("field_renamed", "edu"), ("field_added", "edu"),
                          ("service_removed", "assembly"), ("code_changed", "gg")}
    assert kinds[("record_added", "dart")] == 24


def test_every_changelog_item_is_reported_and_nothing_else(report, v2_world, bundles):
    log = Changelog(v2_world)
    entries = report.entries
    by_tool: dict[str, list[DriftEntry]] = defaultdict(list)
    for e in entries:
        by_tool[e.tool].append(e)
    assert report.compared == len(calls("x"))  # each call is one query, recorded on both sides
    assert not report.only_old and not report.only_new and not report.notes

    # -- every changelog item shows up -----------------------------------------------------------
    krx_added = [e for e in by_tool["get_stock_price_trend"] if e.kind == "record_added"]
    assert {(e.detail["record"]["basDt"], e.detail["record"]["srtnCd"]) for e in krx_added} == log.krx
    dart_added = [e for e in by_tool["search_dart_disclosures"] if e.kind == "record_added"]
    assert {e.detail["record"]["rcept_no"] for e in dart_added} == log.dart
    bill_changes = bill_entries(by_tool)
    assert set(bill_changes) == set(log.bills)
    for item, (old, new) in log.bills.items():
        assert bill_changes[item] == {(old, new)}, item
    fuel = {(e.detail["key"]["serviceAreaCode"], e.detail["field"]): (digits(e.detail["old"]), digits(e.detail["new"]))
            for e in by_tool["get_rest_area_fuel_prices"] if e.kind == "record_changed"}
    assert fuel == log.fuel
    school = {(e.kind, json.dumps(e.detail, sort_keys=True)) for e in by_tool["search_school_info"]}
    (renamed,) = log.by_kind[("field_renamed", "edu")]
    (added,) = log.by_kind[("field_added", "edu")]
    assert school == {("field_renamed", json.dumps({"old_field": renamed["old"], "new_field": renamed["new"]},
                                                   sort_keys=True)),
                      ("field_added", json.dumps({"field": added["field"], "type": "string"}, sort_keys=True))}
    (removed_service,) = log.by_kind[("service_removed", "assembly")]
    (gone,) = by_tool["get_bill_detail"]
    assert gone.kind == "endpoint_gone" and f"/{removed_service['service']}?" in gone.url
    assert gone.detail["old"]["outcome"] == "success" and gone.detail["new"]["outcome"] == "endpoint_unavailable"
    check_code_change(by_tool["gg_aed_location"], log, bundles[0])

    # -- and nothing else ------------------------------------------------------------------------
    for tool in CONTROL_TOOLS:
        assert not by_tool[tool], f"control call {tool} drifted: {by_tool[tool][:3]}"
    unexplained = [e for e in entries if not explained(e, log)]
    assert not unexplained, [e.to_json() for e in unexplained[:5]]
    assert len(entries) == len({json.dumps(e.to_json(), sort_keys=True) for e in entries}), "duplicate entries"


def bill_entries(by_tool: dict[str, list[DriftEntry]]) -> dict[tuple[str, str], set[tuple[Any, Any]]]:
    out: dict[tuple[str, str], set[tuple[Any, Any]]] = defaultdict(set)
    for tool in BILL_TOOLS:
        for e in by_tool[tool]:
            assert e.kind == "record_changed", e.to_json()
            field = ALL_BILLS_ALIASES.get(e.detail["field"], e.detail["field"]) if tool == "search_all_bills" \
                else e.detail["field"]
            out[(e.detail["key"]["BILL_ID"], field)].add((_value(e.detail["old"]), _value(e.detail["new"])))
    return out


def check_code_change(entries: list[DriftEntry], log: Changelog, old: Bundle) -> None:
    """41590's records: gone from the query by code, and recoded (as removed + added, or changed) in the full list."""
    (item,) = log.by_kind[("code_changed", "gg")]
    assert item["old"] == HWASEONG and set(item["new"]) == DISTRICTS
    by_code = [e for e in entries if f"SIGUN_CD={HWASEONG}" in e.url]
    whole = [e for e in entries if "SIGUN_CD=" not in e.url]
    (count,) = [e for e in by_code if e.kind == "cardinality_changed"]
    assert count.detail["new"] == 0 and count.detail["old"] > 0
    gone = [e for e in by_code if e.kind == "record_removed"]
    assert len(gone) == count.detail["old"] and len(by_code) == len(gone) + 1
    moved_out = [e.detail["record"] for e in whole if e.kind == "record_removed"]
    moved_in = [e.detail["record"] for e in whole if e.kind == "record_added"]
    changed = [e for e in whole if e.kind == "record_changed"]
    assert all(e.detail["field"] == "SIGUN_CD" for e in changed)
    assert len(moved_out) + len(changed) == count.detail["old"]  # every 41590 record of the dataset moved

    def without_code(r: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in r.items() if k != "SIGUN_CD"}, sort_keys=True, ensure_ascii=False)

    assert Counter(map(without_code, moved_out)) == Counter(map(without_code, moved_in))


def explained(e: DriftEntry, log: Changelog) -> bool:
    d = e.detail
    if e.tool == "get_stock_price_trend":
        return (e.kind == "record_added" and (d["record"]["basDt"], d["record"]["srtnCd"]) in log.krx) or \
            (e.kind == "cardinality_changed" and d["new"] - d["old"] == len(log.krx))
    if e.tool == "search_dart_disclosures":
        return (e.kind == "record_added" and d["record"]["rcept_no"] in log.dart) or \
            (e.kind == "cardinality_changed" and d["new"] - d["old"] == len(log.dart))
    if e.tool in BILL_TOOLS:
        field = ALL_BILLS_ALIASES.get(d["field"], d["field"]) if e.tool == "search_all_bills" else d["field"]
        return e.kind == "record_changed" and \
            log.bills.get((d["key"]["BILL_ID"], field)) == (_value(d["old"]), _value(d["new"]))
    if e.tool == "get_rest_area_fuel_prices":
        return e.kind == "record_changed" and \
            log.fuel.get((d["key"]["serviceAreaCode"], d["field"])) == (digits(d["old"]), digits(d["new"]))
    if e.tool == "search_school_info":
        return e.kind in ("field_renamed", "field_added")  # checked one by one above
    if e.tool == "get_bill_detail":
        return e.kind == "endpoint_gone"
    if e.tool == "gg_aed_location":
        if e.kind == "record_removed":
            return d["record"]["SIGUN_CD"] == HWASEONG
        if e.kind == "record_added":
            return d["record"]["SIGUN_CD"] in DISTRICTS
        if e.kind == "record_changed":
            return d["field"] == "SIGUN_CD" and d["old"] == HWASEONG and d["new"] in DISTRICTS
        return e.kind == "cardinality_changed" and d["new"] == 0
    return False


def test_report_renders_stably(report, bundles, reader):
    again = compare(*bundles, reader)
    assert json.dumps(again.to_json(), ensure_ascii=False) == json.dumps(report.to_json(), ensure_ascii=False)
    data = report.to_json()
    assert data["summary"]["entries"] == dict(Counter(e["kind"] for e in data["entries"]))
    assert data["summary"]["unchanged"] == len(CONTROL_TOOLS)
    text = report.to_markdown()
    assert text.startswith(f"# Drift report: `a@{bundles[0].version}` → `b@{bundles[1].version}`")
    assert "| assembly | get_bill_detail | endpoint_gone | 1 |" in text
    assert "| field_renamed |  | INDST_SPECL_CCCCL_EXST_YN | INDST_SPECL_CLASS_EXST_YN |" in text
    assert "more in the JSON report" in text  # 100+ krx records added: the table is cut, the JSON is not


def test_a_bundle_has_no_drift_from_itself_and_interactions_compare_like_a_bundle(bundles, reader, report):
    a, b = bundles
    same = compare(a, a, reader)
    assert not same.has_drift and same.compared == report.compared
    from_list = compare(a, list(b.interactions()), reader, new_label=report.new)
    # the same data drift; only two bundles pin catalogs to compare (interactions pin none)
    assert from_list.catalog is None and report.catalog is not None
    assert {**from_list.to_json(), "catalog": None} == {**report.to_json(), "catalog": None}


def test_schema_retype_and_status_only_fallback():
    """A field's JSON type changing is a retype; interactions of no known tool compare by HTTP status."""
    def hub(rows: list[dict[str, Any]], fp: str = "f1", tool: str | None = "search_school_info",
            status: int = 200) -> Interaction:
        body = {"schoolInfo": [{"head": [{"list_total_count": len(rows)}, {"RESULT": {"CODE": "INFO-000"}}]},
                               {"row": rows}]}
        return Interaction(fingerprint=fp, method="GET", url=f"edu:/schoolInfo?KEY=***&n={fp}", platform="edu",
                           status=status, body=json.dumps(body).encode(), tool=tool, origin=Origin.SYNTHETIC)

    old = [hub([{"SD_SCHUL_CODE": "1", "N": "3"}, {"SD_SCHUL_CODE": "2", "N": "4"}]),
           hub([], fp="f2", tool=None), hub([], fp="f3", tool=None)]
    new = [hub([{"SD_SCHUL_CODE": "1", "N": 3}, {"SD_SCHUL_CODE": "2", "N": 5}]),
           hub([], fp="f2", tool=None, status=404), hub([], fp="f3", tool=None, status=500)]
    report = compare(old, new, cassette_reader())
    kinds = {(e.url.rsplit("=", 1)[1], e.kind) for e in report.entries}
    assert kinds == {("f1", "field_retyped"), ("f1", "record_changed"), ("f2", "endpoint_gone"),
                     ("f3", "status_changed")}
    retyped = next(e for e in report.entries if e.kind == "field_retyped")
    assert (retyped.detail["field"], retyped.detail["old_type"], retyped.detail["new_type"]) == \
        ("N", "string", "integer")
    changed = [e.detail for e in report.entries if e.kind == "record_changed"]
    assert changed == [{"key": {"SD_SCHUL_CODE": "1"}, "field": "N", "old": "3", "new": 3},
                       {"key": {"SD_SCHUL_CODE": "2"}, "field": "N", "old": "4", "new": 5}]


# ---- live sample -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def v2_app(v2_world):
    return create_sandbox_app(v2_world, KeyStore.from_mapping(default_keys()))


async def test_live_sample_of_every_query_reports_what_comparing_the_bundles_does(bundles, reader, report, v2_app):
    a, _ = bundles
    sample = await live_sample(a, 100, 1, httpx.ASGITransport(v2_app), Routes.sandbox("http://sandbox"),
                               default_keys(), reader=reader)
    assert not sample.errors and len(queries(sample.original)) == len(queries(a))
    assert {i.fingerprint for i in sample.original} <= {i.fingerprint for i in sample.interactions}
    live = sample.report(reader)
    assert [e.to_json() for e in live.entries] == [e.to_json() for e in report.entries]
    assert not live.only_old and not live.only_new and not live.notes


async def test_live_sample_is_seeded_and_commits_without_keys(bundles, reader, report, v2_app, tmp_path):
    a, _ = bundles
    keys = default_keys()
    routes = Routes.sandbox("http://sandbox")
    store = CassetteStore(tmp_path)
    first = await live_sample(a, 4, 7, httpx.ASGITransport(v2_app), routes, keys, store=store, name="live")
    again = await live_sample(a, 4, 7, httpx.ASGITransport(v2_app), routes, keys)
    urls = sorted(q.url for q in queries(first.original).values())
    assert len(urls) == 4 and urls == sorted(q.url for q in queries(again.original).values())
    committed = store.open("live")
    assert first.ref is not None and committed.version == first.ref.version
    assert len(committed) == len(first.interactions)
    scanner = KeyScanner(keys)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert scanner.find(path.read_bytes()) is None, path
    # what the sample says about its queries is what the full comparison says about them
    expected = [e.to_json() for e in report.entries if e.url in urls]
    assert [e.to_json() for e in first.report(reader).entries] == expected


async def test_live_sample_names_what_it_cannot_send(bundles, v2_app):
    a, _ = bundles
    with pytest.raises(ValueError, match=r"no key for platform '\w+': the recorded request \S+:/"):
        await live_sample(a, 100, 1, httpx.ASGITransport(v2_app), Routes.sandbox("http://sandbox"), {})
    closed = Routes.sandbox("http://127.0.0.1:9")  # nothing listens there: connection refused
    sample = await live_sample(a, 2, 1, httpx.AsyncHTTPTransport(), closed, default_keys(), timeout_s=5)
    assert len(sample.errors) == 2 and not sample.original and not sample.interactions
    assert all("ConnectError" in e["error"] for e in sample.errors)
    notes = sample.report().notes
    assert len(notes) == 2 and all(n["note"].startswith("not re-sent: ConnectError") for n in notes)


async def test_live_sample_fetches_the_pages_a_result_grew_by(sandbox_app, v2_app, reader, tmp_path):
    """Recorded on v1 in pages of 100; on v2 (a trading day more) the result needs more pages than were recorded."""
    keys, routes = default_keys(), Routes.sandbox("http://sandbox")
    store = CassetteStore(tmp_path)
    recording = store.recording("krx-pages")
    recorder = RecorderTransport("record", routes=routes, inner=httpx.ASGITransport(sandbox_app), recording=recording)
    url = routes.url_of("krx") + "/GetStockSecuritiesInfoService/getStockPriceInfo"
    async with httpx.AsyncClient(transport=recorder) as http:
        page, pages = 1, 1
        while page <= pages:
            request = http.build_request("GET", url, params={
                "serviceKey": keys["krx"], "resultType": "json", "pageNo": page, "numOfRows": 100,
                "beginBasDt": "20261130"})
            request.extensions[TOOL_EXTENSION] = "get_stock_price_trend"
            assert (await http.send(request)).status_code == 200
            pages = math.ceil(reader(recording.interactions[0]).total / 100)
            page += 1
    bundle = store.open(str(recording.commit()))

    grown = await live_sample(bundle, 1, 1, httpx.ASGITransport(v2_app), routes, keys, reader=reader)
    report = grown.report(reader)
    (count,) = [e for e in report.entries if e.kind == "cardinality_changed"]
    assert count.detail["new"] == 2 * count.detail["old"]  # one more day of the same listed stocks
    assert sorted(i.page for i in grown.interactions) == list(range(1, math.ceil(count.detail["new"] / 100) + 1))
    assert len(grown.interactions) > pages
    added = [e for e in report.entries if e.kind == "record_added"]
    assert len(added) == count.detail["old"] and len(report.entries) == len(added) + 1 and not report.notes
    assert {e.detail["record"]["basDt"] for e in added} == {V2_DAY}

    short = await live_sample(bundle, 1, 1, httpx.ASGITransport(v2_app), routes, keys)  # no reader: recorded pages only
    assert len(short.interactions) == pages
    partial = short.report(reader)
    assert [e.kind for e in partial.entries] == ["cardinality_changed"]
    (note,) = partial.notes
    assert note["note"].startswith("records not compared: a side holds fewer records than its total")
