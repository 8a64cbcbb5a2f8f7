"""Record through the gateway, replay through the gateway: the recorder's contract end to end.

Real parts: the committed catalog, the platform clients, the sandbox upstream in-process, the
recorder transport and bundles written to a temporary cassettes folder.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcp_gateway.gateway import GatewayConfigError, open_gateway
from recorder import CassetteStore
from recorder.cassette import BundleNotFoundError
from recorder.redaction import secret_forms
from sandbox import default_keys
from tests.conftest import TEST_DATA_DIR, TEST_SCALE, sandbox_upstream

# Calls on every platform and every envelope family (incl. DART's corpCode ZIP, 학교알리미, law bodies).
CALLS = [
    ("list_tollbooths", {"numOfRows": 7}),
    ("search_subway_stations", {"LINE_NUM": "02호선"}),
    ("find_dart_corp_code", {"corp_name": "삼성"}),
    ("search_dart_disclosures", {"corp_code": "00126380", "bgn_de": "20250101", "end_de": "20251231"}),
    ("get_stock_price_trend", {"likeSrtnCd": "005930", "beginBasDt": "20260101", "numOfRows": 20}),
    ("list_deposit_insured_institutions", {}),
    ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}),
    ("get_national_qualification_exam_schedule", {"implYy": "2025"}),
    ("search_laws", {"query": "법"}),
    ("search_court_precedents", {"query": "손해배상"}),
    ("school_basic_disclosure", {}),  # codes taken from the world (see calls_for)
    ("get_national_assembly_members", {"POLY_NM": "더불어민주당"}),
    ("gg_genrestrt", {"SIGUN_CD": "41110"}),
]


def calls_for(world) -> list[tuple[str, dict]]:
    school = world.rows("SELECT _kind_code AS k, _sgg_code AS s FROM edu_school LIMIT 1")[0]
    return [(tool, {"schulKndCode": school["k"], "sggCode": school["s"]} if tool == "school_basic_disclosure" else args)
            for tool, args in CALLS]


def gateway(tmp: Path, mode: str, bundle: str = "calls", **kw):
    return open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode=mode, cassettes=tmp, bundle=bundle, **kw)


async def call_all(gw, calls, session="s") -> list[dict]:
    out = []
    for tool, args in calls:
        result = await gw.runtime.call(tool, args, session)
        out.append(result.model_dump(exclude={"correlation_id"}))
    return out


@pytest.fixture(scope="module")
def calls(world) -> list[tuple[str, dict]]:
    return calls_for(world)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, calls) -> tuple[Path, list[dict]]:
    """The calls recorded once into a fresh cassettes folder: (folder, the tool results seen while recording)."""
    tmp = tmp_path_factory.mktemp("cassettes")

    async def record():
        gw = gateway(tmp, "record")
        try:
            return await call_all(gw, calls)
        finally:
            await gw.aclose()

    return tmp, asyncio.run(record())


def test_every_call_succeeded_while_recording(recorded, calls):
    _, results = recorded
    for (tool, _), result in zip(calls, results, strict=True):
        assert result["outcome"] in ("semantic_success", "generic_success"), (tool, result["message"])
        assert result["records"], tool


async def test_replay_gives_identical_tool_results_on_every_platform(recorded, calls):
    tmp, results = recorded
    gw = gateway(tmp, "replay")
    assert gw.sandbox is not None and gw.sandbox.world is None  # strict replay never opens the world
    try:
        replayed = await call_all(gw, calls)
    finally:
        await gw.aclose()
    for (tool, _), old, new in zip(calls, results, replayed, strict=True):
        assert json.dumps(new, ensure_ascii=False, sort_keys=True) == json.dumps(old, ensure_ascii=False,
                                                                                 sort_keys=True), tool
    platforms = CassetteStore(tmp).open("calls").manifest.counts["platforms"]
    assert set(platforms) == {"ex", "seoul", "dart", "krx", "kdic", "edu", "hrdk", "law", "assembly", "gg"}


@pytest.mark.parametrize(("tool", "args"), [
    ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}),
    ("gg_genrestrt", {"SIGUN_CD": "41110"}),
    ("search_subway_stations", {"LINE_NUM": "02호선"}),
    ("search_dart_disclosures", {"corp_code": "00126380", "bgn_de": "20250101", "end_de": "20251231"}),
    ("search_laws", {"query": "법"}),
])
async def test_any_page_and_size_of_a_recorded_query_replays(recorded, tool, args):
    tmp, _ = recorded
    live = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR)
    replay = gateway(tmp, "replay")
    try:
        total = (await live.runtime.call(tool, args, "s")).total_count
        assert total and total > 3
        combos = {(1, 1), (2, 3), (3, 7), (1, 100), (2, 50), (total // 3 + 1, 3), (1, total), (total, 1),
                  (total + 5, 1), (4, 13)}
        for page, size in sorted(combos):
            size = min(size, 100 if tool == "search_laws" else 1000)
            ask = {**args, "pageNo": page, "numOfRows": size}
            want = (await live.runtime.call(tool, ask, "s")).structured()
            got = (await replay.runtime.call(tool, ask, "s")).structured()
            assert got == want, (page, size)  # records, total count, outcome, upstream code: all as live
            if page * size <= total:
                assert len(got["records"]) == size and got["total_count"] == total
    finally:
        await live.aclose()
        await replay.aclose()


async def test_strict_replay_miss_is_a_clear_outcome_naming_the_request(recorded, tmp_path):
    tmp, _ = recorded
    gw = gateway(tmp, "replay", stats_file=tmp_path / "run.json")
    try:
        miss = await gw.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "B10"}, "s")
        other = await gw.runtime.call("list_tollbooths", {"numOfRows": 7}, "s")
    finally:
        await gw.aclose()
    assert miss.outcome == "replay_miss" and miss.is_error
    assert "ATPT_OFCDC_SC_CODE=B10" in miss.message and "fingerprint" in miss.message
    assert "nearest recorded: edu:/schoolInfo?ATPT_OFCDC_SC_CODE=T10" in miss.message
    assert other.outcome == "generic_success"  # the gateway goes on after a miss
    run = json.loads((tmp_path / "run.json").read_text())  # what `kopa cassettes coverage --run` reads
    assert len(run["misses"]) == 1 and "ATPT_OFCDC_SC_CODE=B10" in next(iter(run["misses"].values()))
    assert sum(run["hits"].values()) == 1


def test_no_key_in_any_file_the_recorder_wrote(recorded):
    tmp, _ = recorded
    forms = {f.encode() for key in default_keys().values() for f in secret_forms(key)}
    files = [p for p in tmp.rglob("*") if p.is_file()]
    assert any(p.name == "bodies.bin" for p in files)
    for path in files:
        data = path.read_bytes()
        leaked = [f for f in forms if f in data]
        assert not leaked, f"{path.relative_to(tmp)} holds a key"


def test_recording_holds_provenance_per_interaction(recorded):
    tmp, _ = recorded
    bundle = CassetteStore(tmp).open("calls")
    items = list(bundle.interactions())
    assert {i.source for i in items} == {"sandbox@v1"} and {i.origin for i in items} == {"recorded"}
    assert {i.tool for i in items} >= {tool for tool, _ in CALLS}
    assert all(i.recorded_at.endswith("Z") and i.recorder_version.startswith("kopa-recorder/") for i in items)
    assert bundle.manifest.sources == ("sandbox@v1",) and bundle.manifest.parent is None


async def test_replay_or_record_fills_misses_into_a_new_version(recorded, tmp_path):
    tmp, _ = recorded
    store = CassetteStore(tmp)
    first = store.resolve("calls")
    # a copy of the name, so other tests keep their head
    folder = tmp_path / "c"
    folder.mkdir()
    import shutil
    shutil.copytree(first.folder, folder / "calls" / first.version)
    (folder / "calls" / "HEAD").write_text(first.version)
    gw = gateway(folder, "replay-or-record")
    try:
        hit = await gw.runtime.call("list_tollbooths", {"numOfRows": 7}, "s")
        new = await gw.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "B10"}, "s")
    finally:
        await gw.aclose()
    assert hit.outcome == "generic_success" and new.outcome == "semantic_success"
    assert gw.transport.stats.hits and gw.transport.stats.recorded >= 1
    head = CassetteStore(folder).open("calls")
    assert head.manifest.parent == first.version and head.version != first.version
    assert len(head) == len(CassetteStore(folder).open(f"calls@{first.version}")) + gw.transport.stats.recorded
    assert oct((folder / "calls" / first.version / "bodies.bin").stat().st_mode)[-3:] == "444"


async def test_exchanges_recorded_into_a_capture_make_the_bundle_that_recording_them_there_makes(recorded, calls,
                                                                                                  tmp_path):
    """A gateway recording into memory (an EDGE synthesis worker's) records what a recording gateway records: another
    gateway adds the exchanges (``add_recorded``) and seals them, and that version replays the calls as the bundle
    recorded directly does. Neither the capture nor the added exchanges hold a key."""
    import pickle

    from recorder import Capture

    tmp, results = recorded
    capture = Capture()
    worker = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="record", record_into=capture)
    try:
        await call_all(worker, calls)
    finally:
        await worker.aclose()
    exchanges = pickle.loads(pickle.dumps(capture.drain()))  # as a worker process returns them
    assert len(capture) == 0 and worker.recording is None and worker.commit() is None
    direct = list(CassetteStore(tmp).open("calls").interactions())
    same = ("fingerprint", "method", "url", "status", "body", "page", "size", "tool", "source")
    assert [[getattr(e, f) for f in same] for e in exchanges] == [[getattr(e, f) for f in same] for e in direct]
    forms = {f.encode() for key in default_keys().values() for f in secret_forms(key)}
    assert not [f for e in exchanges for f in forms if f in e.body or f in e.url.encode()]

    writer = gateway(tmp_path, "record", bundle="added")
    try:
        writer.add_recorded(exchanges)
    finally:
        await writer.aclose()
    replay = gateway(tmp_path, "replay", bundle="added")
    try:
        assert await call_all(replay, calls) == results
    finally:
        await replay.aclose()
    with pytest.raises(GatewayConfigError, match="records nothing"):
        replay.add_recorded(exchanges)


def test_mode_configuration_errors_are_clear(tmp_path):
    with pytest.raises(GatewayConfigError, match="needs a cassette bundle name"):
        open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="replay")
    with pytest.raises(GatewayConfigError, match="unknown recorder mode"):
        open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="rewind", bundle="x")
    with pytest.raises(BundleNotFoundError, match="no bundle named 'nothing'"):
        open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="replay", cassettes=tmp_path, bundle="nothing")
    with pytest.raises(ValueError, match="invalid bundle name"):
        open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="record", cassettes=tmp_path, bundle="../escape")
    # the gateway never builds a sandbox itself: recording or live calls need one handed in; a strict replay does not
    with pytest.raises(GatewayConfigError, match="upstream 'sandbox' needs an in-process upstream"):
        open_gateway(upstream="sandbox", home=TEST_DATA_DIR, mode="record", cassettes=tmp_path, bundle="x")
    with pytest.raises(GatewayConfigError, match="only a strict replay runs without one"):
        open_gateway(upstream="sandbox", home=TEST_DATA_DIR)
    from recorder import Capture

    with pytest.raises(GatewayConfigError, match="record_into records; it needs recorder mode record"):
        open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="live", record_into=Capture())


async def test_kopa_serve_replays_by_configuration_alone(recorded, calls):
    """The whole appliance switches to replay through settings: the official client over stdio sees the recording."""
    import os
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.conftest import REPO

    tmp, results = recorded
    params = StdioServerParameters(command=sys.executable, args=["-m", "appliance", "serve", "--stdio"], cwd=REPO,
                                   env={**os.environ, "KOPA_HOME": str(TEST_DATA_DIR),
                                        "KOPA_SANDBOX__SCALE": str(TEST_SCALE), "KOPA_RECORDER__MODE": "replay",
                                        "KOPA_RECORDER__BUNDLE": "calls", "KOPA_RECORDER__CASSETTES": str(tmp)})
    async with Client(params) as client:
        tool, args = calls[3]
        result = await client.call_tool(tool, args)
        assert not result.is_error
        assert result.structured_content["records"] == results[3]["records"]
        missed = await client.call_tool("search_school_info", {"ATPT_OFCDC_SC_CODE": "Z99"})
        assert missed.is_error and missed.structured_content["outcome"] == "replay_miss"
