"""SQL over real bundles (DuckDB), bundle coverage, and replay-run coverage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mcp_gateway.cassette_reader import cassette_reader
from mcp_gateway.gateway import open_gateway
from recorder import Bundle, CassetteStore
from recorder.query import QueryError, coverage, query, replay_run_coverage
from sandbox import default_keys
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

CALLS = [("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}), ("search_school_info", {"ATPT_OFCDC_SC_CODE": "B10"}),
         ("search_laws", {"query": "민법"}), ("list_tollbooths", {}), ("search_subway_stations", {"LINE_NUM": "02호선"})]


async def record(version: str, name: str, cassettes: Path, calls) -> None:
    gateway = open_gateway(sandbox=sandbox_upstream(version), home=TEST_DATA_DIR, mode="record",
                           cassettes=cassettes, bundle=name)
    try:
        for tool, args in calls:
            assert (await gateway.runtime.call(tool, args, "query-test")).outcome.ok
    finally:
        await gateway.aclose()


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("query-cassettes")
    asyncio.run(record("v1", "one", folder, CALLS))
    asyncio.run(record("v2", "two", folder, CALLS[:1]))
    return folder


@pytest.fixture(scope="module")
def one(cassettes) -> Bundle:
    return CassetteStore(cassettes).open("one")


@pytest.fixture(scope="module")
def two(cassettes) -> Bundle:
    return CassetteStore(cassettes).open("two")


def test_interactions_view_reads_the_index_with_bundle_and_version(one, two):
    columns, rows = query([one, two], "SELECT bundle, version, tool, count(*) AS n FROM interactions "
                                      "GROUP BY ALL ORDER BY bundle, tool")
    assert columns == ["bundle", "version", "tool", "n"]
    counts = {(b, t): n for b, v, t, n in rows}
    assert {t: n for (b, t), n in counts.items() if b == "one"} == one.manifest.counts["tools"]
    assert {t: n for (b, t), n in counts.items() if b == "two"} == two.manifest.counts["tools"]
    assert {(b, v) for b, v, _, _ in rows} == {("one", one.version), ("two", two.version)}


def test_bundles_can_be_named_and_bodies_read_lazily(one, two):
    sql = ("SELECT bundle, url, body FROM responses WHERE tool = 'search_school_info' AND url LIKE '%T10%' "
           "AND page = 1 ORDER BY bundle, size")
    columns, rows = query([("old", one), ("new", two)], sql)
    assert columns == ["bundle", "url", "body"] and {r[0] for r in rows} == {"old", "new"}
    for _, url, body in rows:
        assert "KEY=***" in url and "제주" in body  # T10 is Jeju's office
    # the new world renamed a schoolInfo field: SQL over both bundles shows it
    _, renamed = query([("old", one), ("new", two)],
                       "SELECT bundle, count(*) FROM responses WHERE tool = 'search_school_info' "
                       "AND body LIKE '%INDST_SPECL_CLASS_EXST_YN%' GROUP BY bundle")
    assert [b for b, _ in renamed] == ["new"]
    _, direct = query([one], "SELECT body(bundle, version, seq) = "
                             "(SELECT body FROM responses r WHERE r.seq = i.seq) FROM interactions i LIMIT 3")
    assert [r[0] for r in direct] == [True] * 3


def test_no_key_in_any_queried_text(one):
    _, rows = query([one], "SELECT url, headers, body FROM responses")
    text = json.dumps(rows, ensure_ascii=False, default=str)
    assert all(key not in text for key in default_keys().values())


@pytest.mark.parametrize(("sql", "says"), [
    ("SELEC tool FROM interactions", "syntax error"),
    ("SELECT no_such_column FROM interactions", 'column "no_such_column" not found'),
    ("SELECT * FROM no_such_view", "no_such_view"),
])
def test_bad_sql_is_a_clear_error(one, sql, says):
    with pytest.raises(QueryError, match="query failed: ") as caught:
        query([one], sql)
    assert says in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_query_refuses_no_bundles_and_a_bundle_twice(one):
    with pytest.raises(ValueError, match="no bundles"):
        query([], "SELECT 1")
    with pytest.raises(ValueError, match=f"one@{one.version} given twice"):
        query([one, one], "SELECT 1")


def test_coverage_lists_tools_params_and_platforms(one):
    report = coverage(one)
    assert report["bundle"] == f"one@{one.version}" and report["interactions"] == len(one)
    assert report["platforms"] == one.manifest.counts["platforms"]
    tools = report["tools"]
    assert set(tools) == {tool for tool, _ in CALLS}
    school = tools["search_school_info"]
    assert school["platform"] == "edu" and school["queries"] == 2
    assert school["interactions"] == one.manifest.counts["tools"]["search_school_info"]
    assert school["params"] == {"ATPT_OFCDC_SC_CODE": ["B10", "T10"], "Type": ["json"]}  # no KEY, no paging
    assert 1000 in school["page_sizes"]
    assert tools["search_laws"]["params"]["query"] == ["민법"]
    # Seoul's optional path segments by position: STATION_CD, STATION_NM skipped, LINE_NUM third
    assert tools["search_subway_stations"]["params"] == {"path3": ["02호선"]}


def test_coverage_with_a_reader_counts_outcomes(one):
    report = coverage(one, cassette_reader())
    for name, tool in report["tools"].items():
        assert sum(tool["outcomes"].values()) == tool["interactions"], name
        assert tool["outcomes"].get("success", 0) >= 1, name


async def test_replay_run_coverage_names_hits_and_misses(cassettes, one):
    gateway = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="replay", cassettes=cassettes, bundle="one")
    try:
        assert (await gateway.runtime.call("search_laws", {"query": "민법"}, "s")).outcome.ok
        missed = await gateway.runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "J10"}, "s")
        assert not missed.outcome.ok
        stats = gateway.transport.stats
    finally:
        await gateway.aclose()
    report = replay_run_coverage(one, stats)
    assert report["hits"] == sum(stats.hits.values()) >= 1
    assert report["tools"]["search_laws"]["hit"] >= 1 and report["tools"]["list_tollbooths"]["hit"] == 0
    assert report["hit_fingerprints"] < report["recorded_fingerprints"] == one.fingerprints
    assert report["coverage"] == round(report["hit_fingerprints"] / report["recorded_fingerprints"], 4)
    (miss,) = report["misses"]
    assert "ATPT_OFCDC_SC_CODE=J10" in miss["url"] and not miss["query_recorded"]
    assert any("/SearchSTNBySubwayLineInfo/" in url for url in report["unused"])
    assert replay_run_coverage(one, json.loads(json.dumps(stats.as_json()))) == report  # as saved by a run
