"""경기데이터드림 emulation: hub envelope, paging, errors, filters, faults and the district chains."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from sandbox import create_sandbox_app
from sandbox.faults import FaultKind, FaultProfile, FaultRates
from sandbox.platforms import gyeonggi
from sandbox.platforms.base import PlatformContext
from sandbox.platforms.hub import value_str
from sandbox.world.facts import GYEONGGI_BY_CODE

NO_DATA = {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}
GG_BBOX = (36.89, 38.29, 126.37, 127.86)


def error(code: str, message: str) -> dict:
    return {"RESULT": {"CODE": code, "MESSAGE": message}}


def entry(world, service: str) -> dict:
    (row,) = world.rows("SELECT * FROM district_datasets WHERE platform = 'gg' AND service = ?", [service])
    return row


def field_names(e: dict) -> list[str]:
    return [f["name"] for f in json.loads(e["fields"])]


def rows_of(body: dict, service: str) -> list[dict]:
    return body[service][1]["row"]


def total_of(body: dict, service: str) -> int:
    return body[service][0]["head"][0]["list_total_count"]


def stored(world, service: str, where: str = "", params: tuple = (), offset: int = 0, limit: int = 5) -> list[dict]:
    """Rows of a Gyeonggi dataset straight from the world, in service order, under their real names."""
    e = entry(world, service)
    pairs = json.loads(e["storage"])["columns"]
    select = ", ".join(f'"{c}" AS "{f}"' for f, c in pairs)
    return world.rows(f'SELECT {select} FROM gg_dataset_rows WHERE "_ds" = ? {where} ORDER BY "_seq" '
                      f"LIMIT ? OFFSET ?", [e["dataset_id"], *params, limit, offset])


@pytest.fixture(scope="module")
def key(keys) -> str:
    return keys.first("gg")


def test_library_service_answers_the_hub_envelope_with_catalog_fields(http, world, key):
    e = entry(world, "Tbggibllbrm")
    body = http.get("/gg/Tbggibllbrm", params={"KEY": key, "Type": "json", "pSize": 3}).json()
    head = body["Tbggibllbrm"][0]["head"]
    assert head == [{"list_total_count": e["row_count"]},
                    {"RESULT": {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다."}}]
    rows = rows_of(body, "Tbggibllbrm")
    assert [list(r) for r in rows] == [field_names(e)] * len(rows)
    for r in rows:
        assert {"SIGUN_NM", "EMD_NM", "LIBRRY_NM", "HMPG_ADDR", "REFINE_ROADNM_ADDR", "READROOM_OPEN_TM_INFO",
                "READROOM_REST_DE_INFO", "REFINE_WGS84_LAT", "REFINE_WGS84_LOGT"} <= set(r)
        assert all(v is None or isinstance(v, str) for v in r.values())  # numbers print as strings
        assert r["EMD_NM"] in r["REFINE_LOTNO_ADDR"]


def test_xml_is_the_default_format(http, world, key):
    resp = http.get("/gg/Tbggibllbrm", params={"KEY": key, "pSize": 2})
    assert resp.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(resp.content)
    assert root.tag == "Tbggibllbrm"
    assert root.findtext("head/list_total_count") == str(entry(world, "Tbggibllbrm")["row_count"])
    assert root.findtext("head/RESULT/CODE") == "INFO-000"
    assert len(root.findall("row")) == 2


def test_pages_follow_pindex_and_psize(http, world, key):
    page1 = rows_of(http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "pIndex": 1, "pSize": 3}).json(),
                    "GENRESTRT")
    page2 = rows_of(http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "pIndex": 2, "pSize": 3}).json(),
                    "GENRESTRT")
    expected = [{k: value_str(v) for k, v in r.items()} for r in stored(world, "GENRESTRT", limit=6)]
    assert page1 + page2 == expected


def test_parameter_names_are_case_insensitive(http, key):
    upper = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "pIndex": 2, "pSize": 2}).json()
    lower = http.get("/gg/GENRESTRT", params={"key": key, "type": "json", "pindex": 2, "psize": 2}).json()
    assert upper == lower


def test_more_than_1000_rows_per_page_is_error_336(http, key):
    body = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "pSize": 1001}).json()
    assert body == error("ERROR-336", "데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다.")


@pytest.mark.parametrize("params", [{"pIndex": "abc"}, {"pSize": "0"}, {"pIndex": "-1"}])
def test_non_positive_or_non_integer_paging_is_error_333(http, key, params):
    resp = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", **params})
    assert resp.status_code == 200
    assert resp.json()["RESULT"]["CODE"] == "ERROR-333"


def test_no_data_is_the_wrapperless_info_200(http, key):
    resp = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "SIGUN_NM": "없는시"})
    assert resp.status_code == 200
    assert resp.json() == NO_DATA


def test_a_page_past_the_end_is_info_200(http, world, key):
    total = entry(world, "Tbggibllbrm")["row_count"]
    body = http.get("/gg/Tbggibllbrm", params={"KEY": key, "Type": "json", "pIndex": total + 1, "pSize": 1}).json()
    assert body == NO_DATA


def test_invalid_key_is_error_290_in_the_requested_format(http):
    message = "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오."
    assert http.get("/gg/GENRESTRT", params={"KEY": "wrong", "Type": "json"}).json() == error("ERROR-290", message)
    root = ET.fromstring(http.get("/gg/GENRESTRT", params={"KEY": "wrong"}).content)
    assert (root.tag, root.findtext("CODE")) == ("RESULT", "ERROR-290")


def test_keyless_calls_get_at_most_five_sample_rows(http, world):
    body = http.get("/gg/GENRESTRT", params={"Type": "json", "pSize": 100}).json()
    assert total_of(body, "GENRESTRT") == entry(world, "GENRESTRT")["row_count"]
    assert len(rows_of(body, "GENRESTRT")) == 5


def test_unknown_service_is_error_310(http, key):
    body = http.get("/gg/NoSuchService", params={"KEY": key, "Type": "json"}).json()
    assert body == error("ERROR-310", "해당하는 서비스를 찾을 수 없습니다. 요청인자 중 SERVICE를 확인하십시오.")
    assert http.get("/gg/NoSuchService", params={"KEY": "wrong", "Type": "json"}).json()["RESULT"]["CODE"] == "ERROR-290"


def test_unsupported_type_is_error_301(http, key):
    assert http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "csv"}).json()["RESULT"]["CODE"] == "ERROR-301"


def test_removed_service_answers_error_310(world, keys, key):
    pctx = PlatformContext(gyeonggi.SPEC, world, keys, removed_services=frozenset({"GENRESTRT"}))
    with TestClient(gyeonggi.create_app(pctx)) as client:
        assert client.get("/GENRESTRT", params={"KEY": key, "Type": "json"}).json()["RESULT"]["CODE"] == "ERROR-310"
        assert client.get("/Tbggibllbrm", params={"KEY": key, "Type": "json"}).json()["Tbggibllbrm"]


def test_sigun_cd_filter_gives_rows_of_that_municipality_inside_gyeonggi(http, world, key):
    (sigun,) = world.rows("SELECT SIGUN_CD FROM gg_dataset_rows WHERE _ds = ? ORDER BY _seq DESC LIMIT 1",
                          [entry(world, "GENRESTRT")["dataset_id"]])
    code = sigun["SIGUN_CD"]
    body = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "SIGUN_CD": code, "pSize": 1000}).json()
    rows = rows_of(body, "GENRESTRT")
    muni = GYEONGGI_BY_CODE[code]
    assert total_of(body, "GENRESTRT") == world.scalar(
        "SELECT count(*) FROM gg_dataset_rows WHERE _ds = ? AND SIGUN_CD = ?", [entry(world, "GENRESTRT")["dataset_id"], code])
    for r in rows:
        assert (r["SIGUN_CD"], r["SIGUN_NM"]) == (code, muni.name)
        assert r["REFINE_ROADNM_ADDR"].startswith(f"경기도 {muni.name} ")
        lat, lon = float(r["REFINE_WGS84_LAT"]), float(r["REFINE_WGS84_LOGT"])
        assert GG_BBOX[0] < lat < GG_BBOX[1] and GG_BBOX[2] < lon < GG_BBOX[3]
        assert abs(lat - muni.lat) < 0.25 and abs(lon - muni.lon) < 0.3


def test_name_filter_matches_substrings(http, world, key):
    name = stored(world, "GENRESTRT", limit=1)[0]["BIZPLC_NM"]
    body = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "BIZPLC_NM": name[1:], "pSize": 1000}).json()
    assert any(r["BIZPLC_NM"] == name for r in rows_of(body, "GENRESTRT"))
    assert all(name[1:] in r["BIZPLC_NM"] for r in rows_of(body, "GENRESTRT"))


def test_chain_municipality_name_to_facility_address(http, world, key):
    service = "PublicParkingLot"
    muni_name = stored(world, service, limit=1)[0]["SIGUN_NM"]
    # 1. municipality name -> SIGUN_CD (from any Gyeonggi dataset filtered by SIGUN_NM)
    first = http.get(f"/gg/{service}", params={"KEY": key, "Type": "json", "SIGUN_NM": muni_name, "pSize": 1}).json()
    code = rows_of(first, service)[0]["SIGUN_CD"]
    assert GYEONGGI_BY_CODE[code].name == muni_name
    # 2. facilities of that type, paged
    total = total_of(first, service)
    names = []
    for p in range(1, math.ceil(total / 2) + 1):
        names += [r["PARKPLC_NM"] for r in rows_of(http.get(f"/gg/{service}", params={
            "KEY": key, "Type": "json", "SIGUN_CD": code, "pIndex": p, "pSize": 2}).json(), service)]
    assert len(names) == total
    # 3. one facility's address and coordinates
    pick = names[-1]
    detail = rows_of(http.get(f"/gg/{service}", params={
        "KEY": key, "Type": "json", "SIGUN_CD": code, "PARKPLC_NM": pick}).json(), service)
    assert any(d["PARKPLC_NM"] == pick and d["REFINE_LOTNO_ADDR"].startswith(f"경기도 {muni_name}")
               and float(d["REFINE_WGS84_LAT"]) > 36.8 for d in detail)


def test_chain_business_type_and_municipality_to_operating_count(http, world, key):
    ds = entry(world, "GENRESTRT")["dataset_id"]
    for code in ("41110", "41820"):
        body = http.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json", "SIGUN_CD": code,
                                                 "BSN_STATE_NM": "영업/정상", "pSize": 1}).json()
        expected = world.scalar("SELECT count(*) FROM gg_dataset_rows WHERE _ds = ? AND SIGUN_CD = ? "
                                "AND BSN_STATE_NM = '영업/정상'", [ds, code])
        if expected == 0:
            assert body == NO_DATA
            continue
        assert total_of(body, "GENRESTRT") == expected
        assert rows_of(body, "GENRESTRT")[0]["BSN_STATE_NM"] == "영업/정상"


def test_largest_dataset_pages_deep_correctly(http, world, key):
    (big,) = world.rows("SELECT service, row_count FROM district_datasets WHERE platform = 'gg' "
                        "ORDER BY row_count DESC, service LIMIT 1")
    service, total = big["service"], big["row_count"]
    last = math.ceil(total / 1000)
    body = http.get(f"/gg/{service}", params={"KEY": key, "Type": "json", "pIndex": last, "pSize": 1000}).json()
    rows = rows_of(body, service)
    assert total_of(body, service) == total
    assert len(rows) == total - (last - 1) * 1000
    name_field = field_names(entry(world, service))[2]
    expected = stored(world, service, offset=(last - 1) * 1000, limit=1000)
    assert [r[name_field] for r in rows] == [r[name_field] for r in expected]
    assert http.get(f"/gg/{service}", params={"KEY": key, "Type": "json", "pIndex": last + 1,
                                              "pSize": 1000}).json() == NO_DATA


def _request(query: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/gg/GENRESTRT", "query_string": query.encode(),
                    "headers": []})


@pytest.mark.parametrize(("kind", "code"), [(FaultKind.RATE_LIMIT, "ERROR-337"), (FaultKind.SERVER_ERROR, "ERROR-500")])
def test_faults_render_as_hub_errors_in_the_requested_format(kind, code):
    resp = gyeonggi.fault_response(kind, _request("Type=json"))
    assert resp.status_code == 200
    assert json.loads(resp.body)["RESULT"]["CODE"] == code
    root = ET.fromstring(gyeonggi.fault_response(kind, _request("")).body)
    assert root.findtext("CODE") == code


def test_unavailable_fault_is_an_html_503():
    resp = gyeonggi.fault_response(FaultKind.UNAVAILABLE, _request("Type=json"))
    assert resp.status_code == 503
    assert resp.media_type == "text/html"


def test_rate_limit_profile_reaches_clients_as_error_337(world, keys, key):
    app = create_sandbox_app(world, keys, FaultProfile(platforms={"gg": FaultRates(rate_limit=1.0)}))
    with TestClient(app, base_url="http://sandbox") as client:
        body = client.get("/gg/GENRESTRT", params={"KEY": key, "Type": "json"}).json()
    assert body == error("ERROR-337", "일별 트래픽 제한을 넘은 호출입니다. 오늘은 더이상 호출할 수 없습니다.")
