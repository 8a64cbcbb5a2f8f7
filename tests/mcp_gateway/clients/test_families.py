"""Every family against the sandbox: success shape and paging, no data, auth, missing and bad inputs."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_gateway.catalog.spec import Endpoint
from mcp_gateway.clients import ClientSet
from mcp_gateway.runtime.result import Outcome

from .endpoints import (
    ASSEMBLY_MEMBERS,
    DART_COMPANY,
    DART_CORP_CODES,
    DART_LIST,
    EX_REST_OIL,
    EX_REST_OIL_UNPAGED,
    EX_TRAFFIC_IC,
    EX_UNITS,
    GG_AED,
    HRD_ACQUISITION,
    HRD_OPEN_QST,
    HRD_SCHEDULE,
    KDIC_INSTITUTIONS,
    KRX_PRICES,
    LAW_ARTICLES,
    LAW_BODY,
    LAW_SEARCH,
    NEIS_CLASSES,
    NEIS_SCHOOLS,
    SCHOOLINFO_BASICS,
    SEOUL_BIKES,
    SEOUL_STATIONS,
    SEOUL_SUBWAY_RIDERS,
)

PAGED = [
    pytest.param(NEIS_SCHOOLS, {"ATPT_OFCDC_SC_CODE": "B10"}, id="hub-neis"),
    pytest.param(ASSEMBLY_MEMBERS, {}, id="hub-assembly"),
    pytest.param(GG_AED, {"SIGUN_NM": "수원시"}, id="hub-gyeonggi"),
    pytest.param(SEOUL_BIKES, {}, id="seoul"),
    pytest.param(KRX_PRICES, {"itmsNm": "삼성전자"}, id="datago-krx"),
    pytest.param(KDIC_INSTITUTIONS, {}, id="datago-kdic"),
    pytest.param(HRD_SCHEDULE, {}, id="datago-hrdk"),
    pytest.param(DART_LIST, {"bgn_de": "20261001"}, id="dart-list"),
    pytest.param(DART_CORP_CODES, {"corp_name": "건설"}, id="dart-corpcode-zip"),
    pytest.param(EX_TRAFFIC_IC, {}, id="expressway"),
    pytest.param(EX_REST_OIL, {}, id="expressway-paging-ignored"),
    pytest.param(EX_REST_OIL_UNPAGED, {}, id="expressway-unpaged"),
    pytest.param(LAW_ARTICLES, {"LM": "개인정보 보호법"}, id="law-body-articles"),
    pytest.param(LAW_SEARCH, {"query": "법"}, id="law-search"),
    pytest.param(SCHOOLINFO_BASICS, {"schulKndCode": "02", "sggCode": "11350"}, id="schoolinfo-unpaged"),
]


@pytest.mark.parametrize(("endpoint", "params"), PAGED)
async def test_success_and_paging_translation(clients: ClientSet, endpoint: Endpoint, params: dict[str, Any]):
    first = await clients.fetch(endpoint, params, page_no=1, page_size=10)
    second = await clients.fetch(endpoint, params, page_no=2, page_size=5)
    expected = Outcome.SEMANTIC_SUCCESS if params else Outcome.GENERIC_SUCCESS
    assert first.outcome is expected and second.outcome is expected, (first.message, second.message)
    assert len(first.records) == 10 and all(isinstance(r, dict) and r for r in first.records)
    assert first.total is not None and first.total > 10 and second.total == first.total
    assert second.records == first.records[5:10]
    assert first.attempts == 1 and first.http_status == 200


async def test_single_entity_is_one_record(clients: ClientSet):
    page = await clients.fetch(DART_COMPANY, {"corp_code": "00100338"}, page_no=1, page_size=10)
    assert page.outcome is Outcome.SEMANTIC_SUCCESS and page.total == 1 and page.code == "000"
    (company,) = page.records
    assert company["corp_code"] == "00100338" and "status" not in company and company["corp_name"]


async def test_law_body_is_one_record_and_hides_the_oc(clients: ClientSet, secrets):
    page = await clients.fetch(LAW_BODY, {"LM": "개인정보 보호법"}, page_no=1, page_size=10)
    assert page.outcome is Outcome.SEMANTIC_SUCCESS and page.total == 1
    assert page.records[0]["기본정보"]["법령명_한글"] == "개인정보 보호법"
    hits = await clients.fetch(LAW_SEARCH, {"query": "개인정보"}, page_no=1, page_size=10)
    link = hits.records[0]["법령상세링크"]
    assert "OC=***" in link and secrets.key("law") not in link  # the service echoes the OC; it must not leak


async def test_seoul_positional_filter_skips_blank_segments(clients: ClientSet):
    page = await clients.fetch(SEOUL_STATIONS, {"STATION_NM": "서울"}, page_no=1, page_size=50)
    assert page.outcome is Outcome.SEMANTIC_SUCCESS and page.records
    assert all("서울" in r["STATION_NM"] for r in page.records)
    assert page.url.endswith("/1/50/%20/%EC%84%9C%EC%9A%B8")  # blank STATION_CD, trailing LINE_NUM dropped


async def test_seoul_wrapper_differs_from_service(clients: ClientSet):
    page = await clients.fetch(SEOUL_BIKES, {}, page_no=1, page_size=3)
    assert set(page.records[0]) >= {"stationName", "parkingBikeTotCnt"}  # came under "rentBikeStatus"


async def test_assembly_single_row_object_becomes_a_list(clients: ClientSet, world):
    name = world.scalar("SELECT HG_NM FROM assembly_member GROUP BY HG_NM HAVING count(*) = 1 LIMIT 1")
    page = await clients.fetch(ASSEMBLY_MEMBERS, {"HG_NM": name}, page_no=1, page_size=10)
    assert page.outcome is Outcome.SEMANTIC_SUCCESS and page.total == 1
    assert [r["HG_NM"] for r in page.records] == [name]


NO_DATA = [
    pytest.param(NEIS_SCHOOLS, {"SCHUL_NM": "없는학교zz"}, "INFO-200", id="hub"),
    pytest.param(SEOUL_STATIONS, {"STATION_NM": "없는역zz"}, "INFO-200", id="seoul"),
    pytest.param(KRX_PRICES, {"itmsNm": "없는종목zz"}, "00", id="datago-fsc-empty-items"),
    pytest.param(KDIC_INSTITUTIONS, {"fnccmpNm": "없는은행zz"}, "03", id="datago-kdic-03"),
    pytest.param(DART_LIST, {"corp_code": "99999999"}, "013", id="dart"),
    pytest.param(EX_UNITS, {"unitCode": "9999"}, "SUCCESS", id="expressway"),
    pytest.param(LAW_SEARCH, {"query": "없는법령zz"}, "00", id="law-search"),
    pytest.param(LAW_BODY, {"LM": "없는법령zz"}, "no-match", id="law-body"),
    pytest.param(SCHOOLINFO_BASICS, {"schulKndCode": "02", "sggCode": "99999"}, "success", id="schoolinfo"),
]


@pytest.mark.parametrize(("endpoint", "params", "code"), NO_DATA)
async def test_no_data_is_success_with_zero_records(clients: ClientSet, endpoint, params, code):
    page = await clients.fetch(endpoint, params, page_no=1, page_size=10)
    assert (page.outcome, page.records, page.total, page.code) == (Outcome.SEMANTIC_SUCCESS, [], 0, code)


AUTH = [pytest.param(endpoint, params, id=pid) for pid, (endpoint, params) in {
    "hub": (NEIS_SCHOOLS, {}), "hub-gyeonggi": (GG_AED, {}), "seoul-xml-on-json": (SEOUL_BIKES, {}),
    "datago-gateway-xml": (KRX_PRICES, {}), "datago-hrdk": (HRD_SCHEDULE, {}), "dart": (DART_LIST, {}),
    "dart-zip-endpoint-xml": (DART_CORP_CODES, {}), "expressway": (EX_TRAFFIC_IC, {}), "law": (LAW_SEARCH, {}),
    "schoolinfo": (SCHOOLINFO_BASICS, {"schulKndCode": "02", "sggCode": "11350"}),
}.items()]


@pytest.mark.parametrize(("endpoint", "params"), AUTH)
async def test_wrong_key_is_auth_error_not_retried(clients: ClientSet, endpoint, params):
    page = await clients.fetch(endpoint, params, page_no=1, page_size=10, key="wrong+key/=")
    assert page.outcome is Outcome.AUTH_ERROR, (page.code, page.message)
    assert page.attempts == 1 and page.records == []
    assert "wrong" not in page.url  # the call's key is redacted even when it is not a configured one


MISSING = [
    pytest.param(NEIS_CLASSES, {}, "ERROR-300", Outcome.MISSING_FIELD, id="hub"),
    pytest.param(SEOUL_SUBWAY_RIDERS, {}, "ERROR-300", Outcome.MISSING_FIELD, id="seoul"),
    pytest.param(HRD_ACQUISITION, {"acquYy": "2024"}, "11", Outcome.MISSING_FIELD, id="datago"),
    pytest.param(SCHOOLINFO_BASICS, {"schulKndCode": "02"}, "fail", Outcome.MISSING_FIELD, id="schoolinfo"),
    # OpenDART has no missing-field status: a missing corp_code is status 100 (bad field value).
    pytest.param(DART_COMPANY, {}, "100", Outcome.SCHEMA_MISMATCH, id="dart"),
]


@pytest.mark.parametrize(("endpoint", "params", "code", "outcome"), MISSING)
async def test_missing_parameter(clients: ClientSet, endpoint, params, code, outcome):
    page = await clients.fetch(endpoint, params, page_no=1, page_size=10)
    assert (page.outcome, page.code, page.attempts) == (outcome, code, 1), page.message


BAD_VALUE = [
    pytest.param(HRD_OPEN_QST, {}, 60, "930", id="datago-provider-cap"),
    pytest.param(DART_LIST, {"bgn_de": "2026-10-01"}, 10, "100", id="dart"),
    pytest.param(EX_TRAFFIC_IC, {"inOutType": "abc"}, 10, "exception", id="expressway-java-exception"),
    pytest.param(SCHOOLINFO_BASICS, {"apiType": "99", "schulKndCode": "02", "sggCode": "11350"}, 10, "fail",
                 id="schoolinfo"),
]


@pytest.mark.parametrize(("endpoint", "params", "page_size", "code"), BAD_VALUE)
async def test_bad_value_is_schema_mismatch(clients: ClientSet, endpoint, params, page_size, code):
    page = await clients.fetch(endpoint, params, page_no=1, page_size=page_size)
    assert (page.outcome, page.code, page.attempts) == (Outcome.SCHEMA_MISMATCH, code, 1), page.message


async def test_page_beyond_the_endpoint_cap_is_refused_before_sending(clients: ClientSet):
    page = await clients.fetch(NEIS_SCHOOLS, {}, page_no=1, page_size=5000)
    assert page.outcome is Outcome.SCHEMA_MISMATCH and page.attempts == 0 and "1000" in page.message


@pytest.mark.parametrize(("endpoint", "code"), [
    pytest.param(NEIS_SCHOOLS.model_copy(update={"path": "noSuchService"}), "ERROR-310", id="hub"),
    pytest.param(SEOUL_BIKES.model_copy(update={"path": "noSuchService"}), "ERROR-310", id="seoul"),
    pytest.param(KRX_PRICES.model_copy(update={"path": "NoSuchService/getNothing"}), "12", id="datago"),
    pytest.param(EX_UNITS.model_copy(update={"path": "nosuch/operation"}), "404", id="expressway"),
    pytest.param(LAW_SEARCH.model_copy(update={"fixed": {"target": "nosuch"}}), "404", id="law"),
])
async def test_unknown_endpoint_is_unavailable(clients: ClientSet, endpoint, code):
    page = await clients.fetch(endpoint, {}, page_no=1, page_size=10)
    assert (page.outcome, page.code) == (Outcome.ENDPOINT_UNAVAILABLE, code), page.message


@pytest.mark.parametrize(("endpoint", "params", "field"), [
    pytest.param(SEOUL_BIKES.model_copy(update={"list_key": "rentBikeStatus.row"}), {}, "stationName", id="seoul"),
    pytest.param(KDIC_INSTITUTIONS.model_copy(update={"list_key": "getInsurgTrgetFnltInfoList.item"}), {},
                 "fnccmpNm", id="datago-kdic"),
    pytest.param(KRX_PRICES.model_copy(update={"list_key": "response.body.items.item"}), {"itmsNm": "삼성전자"},
                 "clpr", id="datago-standard"),
    pytest.param(HRD_SCHEDULE.model_copy(update={"list_key": "body.items"}), {}, "implYy", id="datago-hrdk"),
    pytest.param(EX_TRAFFIC_IC.model_copy(update={"list_key": "trafficIc"}), {}, "trafficAmout", id="expressway"),
    pytest.param(LAW_SEARCH.model_copy(update={"list_key": "LawSearch.law"}), {"query": "법"}, "법령명한글",
                 id="law"),
])
async def test_catalog_list_key_names_where_records_sit(clients: ClientSet, endpoint, params, field):
    page = await clients.fetch(endpoint, params, page_no=1, page_size=5)
    assert page.outcome.ok and len(page.records) == 5 and all(field in r for r in page.records)


async def test_local_filters_are_applied_by_the_client(clients: ClientSet):
    page = await clients.fetch(DART_CORP_CODES, {"corp_name": "건설"}, page_no=1, page_size=1000)
    assert page.total == len(page.records) > 0 and all("건설" in r["corp_name"] for r in page.records)
    assert "corp_name" not in page.url  # not sent: the ZIP endpoint cannot filter
    listed = next(r for r in page.records if r["stock_code"])
    exact = await clients.fetch(DART_CORP_CODES, {"stock_code": listed["stock_code"]}, page_no=1, page_size=10)
    assert [r["corp_code"] for r in exact.records] == [listed["corp_code"]] and exact.total == 1
