"""The cassette reader reads recorded bodies as the gateway's clients read live ones."""

from __future__ import annotations

from mcp_gateway.cassette_reader import cassette_reader
from mcp_gateway.gateway import open_gateway
from recorder import CassetteStore
from tests.conftest import TEST_DATA_DIR, sandbox_upstream


async def test_recorded_bodies_read_like_the_live_call(tmp_path, world):
    bill_no = world.scalar('SELECT min("BILL_NO") FROM assembly_bill WHERE "AGE" = ?', ["22"])
    calls = [("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10", "numOfRows": 1000}),
             ("search_laws", {"query": "민법"}), ("get_bill_detail", {"BILL_NO": bill_no})]
    results = {}
    for version in ("v1", "v2"):
        gateway = open_gateway(sandbox=sandbox_upstream(version), home=TEST_DATA_DIR, mode="record",
                               cassettes=tmp_path, bundle=version)
        try:
            for tool, args in calls:
                results[(version, tool)] = await gateway.runtime.call(tool, args, "s")
        finally:
            await gateway.aclose()
    reader = cassette_reader()
    for version in ("v1", "v2"):
        for item in CassetteStore(tmp_path).open(version).interactions():
            if item.page != 1:
                continue
            parsed, live = reader(item), results[(version, item.tool)]
            assert parsed.ok == live.outcome.ok and parsed.code == live.upstream_code, item.url
            if parsed.ok and item.size == 1000:  # the page that holds the whole result
                assert parsed.records == live.records and parsed.total == live.total_count, item.url
    gone = next(i for i in CassetteStore(tmp_path).open("v2").interactions() if i.tool == "get_bill_detail")
    parsed = reader(gone)
    assert (parsed.ok, parsed.outcome, parsed.code, parsed.unavailable) == \
        (False, "endpoint_unavailable", "ERROR-310", True)
    anonymous = reader(gone.with_(tool=None, status=404))  # no tool: HTTP status alone
    assert (anonymous.ok, anonymous.outcome, anonymous.unavailable, anonymous.records) == \
        (False, "http_404", True, [])
    unknown = reader(gone.with_(tool="no_such_tool"))
    assert (unknown.ok, unknown.outcome) == (True, "success")  # HTTP 200, and nothing to read it by
