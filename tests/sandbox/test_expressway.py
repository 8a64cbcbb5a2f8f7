"""Korea Expressway (data.ex.co.kr) emulation over real HTTP: envelope, paging, quirks, chains."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from starlette.testclient import TestClient

from sandbox import create_sandbox_app
from sandbox.faults import FaultKind, FaultProfile, FaultRates
from sandbox.platforms import expressway
from sandbox.platforms.base import PlatformContext

BASE = "/ex/openapi"


@pytest.fixture(scope="module")
def key(keys) -> str:
    return keys.first("ex")


def get_json(http, path: str, key: str, **params):
    response = http.get(f"{BASE}/{path}", params={"key": key, "type": "json", **params})
    assert response.status_code == 200
    return response.json()


def test_locationinfo_unit_lists_tollbooths_with_the_success_envelope(http, world, key):
    unit = world.rows("SELECT * FROM ex_unit ORDER BY unitCode LIMIT 1")[0]
    body = get_json(http, "locationinfo/locationinfoUnit", key, unitCode=unit["unitCode"])
    assert body == {"code": "SUCCESS", "message": "인증키가 유효합니다.", "count": 1, "pageNo": 1, "numOfRows": 10,
                    "pageSize": 1, "list": [{"unitCode": unit["unitCode"], "unitName": unit["unitName"],
                                             "routeNo": unit["routeNo"], "routeName": unit["routeName"],
                                             "xValue": f"{unit['xValue']:.10g}", "yValue": f"{unit['yValue']:.10g}"}]}


def test_real_route_numbers_are_printed_as_four_digits(http, key):
    body = get_json(http, "locationinfo/locationinfoUnit", key, routeName="경부선", numOfRows=1)
    assert body["list"][0]["routeNo"] == "0010"
    assert body["list"][0]["unitName"] == "서울"


def test_page_size_is_the_number_of_pages_and_pages_do_not_overlap(http, world, key):
    total = world.count("ex_unit")
    first = get_json(http, "locationinfo/locationinfoUnit", key, numOfRows=7, pageNo=1)
    second = get_json(http, "locationinfo/locationinfoUnit", key, numOfRows=7, pageNo=2)
    assert first["count"] == total and first["pageSize"] == math.ceil(total / 7)
    assert second["pageNo"] == 2 and len(second["list"]) == 7
    assert not {u["unitCode"] for u in first["list"]} & {u["unitCode"] for u in second["list"]}


def test_page_past_the_end_and_no_match_answer_count_zero_style(http, key):
    past = get_json(http, "locationinfo/locationinfoUnit", key, numOfRows=10, pageNo=9999)
    assert past["code"] == "SUCCESS" and past["list"] == []
    none = get_json(http, "locationinfo/locationinfoUnit", key, unitCode="999")
    assert none["count"] == 0 and none["list"] == [] and none["code"] == "SUCCESS"


def test_real_unit_trtm_caps_a_page_at_99_rows(http, world, key):
    body = get_json(http, "trtm/realUnitTrtm", key, numOfRows=500)
    assert body["numOfRows"] == 99 and len(body["realUnitTrtmVO"]) == 99
    assert body["count"] == world.count("ex_trtm")
    assert body["pageSize"] == math.ceil(body["count"] / 99)


def test_rest_oil_list_ignores_paging_and_returns_everything(http, world, key):
    body = get_json(http, "restinfo/restOilList", key, numOfRows=2, pageNo=3)
    assert len(body["list"]) == body["count"] == world.count("ex_fuel")


def test_location_info_rest_prints_count_as_a_string(http, world, key):
    body = get_json(http, "locationinfo/locationinfoRest", key, numOfRows=1)
    assert body["count"] == str(world.count("ex_rest"))


def test_traffic_ic_quirks_padded_unit_code_and_typo_field(http, world, key):
    unit = world.rows("SELECT unitCode FROM ex_unit ORDER BY unitCode LIMIT 1")[0]["unitCode"]
    body = get_json(http, "trafficapi/trafficIc", key, unitCode=unit, numOfRows=1)
    row = body["trafficIc"][0]
    assert set(row) == {"sumDate", "sumTm", "unitCode", "unitName", "inoutType", "tcsType", "carType",
                        "trafficAmout", "exDivCode"}
    assert row["unitCode"] == unit + " "
    again = get_json(http, "trafficapi/trafficIc", key, unitCode=unit + " ", numOfRows=1)
    assert again["trafficIc"] == body["trafficIc"]


def test_traffic_ic_without_a_date_serves_the_latest_day(http, world, key):
    unit = world.rows("SELECT unitCode FROM ex_unit LIMIT 1")[0]["unitCode"]
    latest = world.scalar("SELECT max(sumDate) FROM ex_traffic_ic WHERE unitCode = ?", [unit])
    body = get_json(http, "trafficapi/trafficIc", key, unitCode=unit, numOfRows=100)
    assert body["count"] == 96 and {r["sumDate"] for r in body["trafficIc"]} == {latest}


def test_fuel_prices_are_won_strings_with_x_when_not_sold(http, world, key):
    body = get_json(http, "business/curStateStation", key, numOfRows=1000)
    row = body["list"][0]
    assert row["gasolinePrice"].endswith("원") and "diselPrice" in row
    assert row["pageNo"] is None and row["numOfRows"] is None
    no_lpg = world.rows("SELECT serviceAreaCode FROM ex_fuel WHERE lpgYn = 'N' LIMIT 1")[0]["serviceAreaCode"]
    station = get_json(http, "business/curStateStation", key, serviceAreaCode=no_lpg)["list"][0]
    assert station["lpgYn"] == "N" and station["lpgPrice"] == "X"


def test_realtime_sms_puts_longitude_in_altitude_and_is_marked_non_reproducible(http, world, key):
    body = get_json(http, "burstInfo/realTimeSms", key, numOfRows=1)
    row = body["realTimeSMSList"][0]
    assert 124 < float(row["altitude"]) < 132 and 33 < float(row["latitude"]) < 39
    assert "burstInfo/realTimeSms" in expressway.REALTIME_SERVICES
    description = world.scalar("SELECT description FROM _world_tables WHERE name = 'ex_incident'")
    assert "NON-REPRODUCIBLE" in description


def test_xml_is_the_default_format(http, key):
    response = http.get(f"{BASE}/restinfo/restBrandList", params={"key": key, "numOfRows": 2})
    root = ET.fromstring(response.content)
    assert root.tag == "data" and root.findtext("code") == "SUCCESS"
    assert len(root.findall("list")) == 2 and root.find("list/brdName") is not None


@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_wrong_key_is_http_200_with_code_error(http, fmt):
    response = http.get(f"{BASE}/trafficapi/trafficIc", params={"key": "0000000000", "type": fmt})
    assert response.status_code == 200
    if fmt == "json":
        assert response.json() == {"code": "ERROR", "message": "인증키가 유효하지 않습니다."}
    else:
        root = ET.fromstring(response.content)
        assert (root.findtext("code"), root.findtext("message")) == ("ERROR", "인증키가 유효하지 않습니다.")


@pytest.mark.parametrize("agent", ["", "curl/8.5.0"])
def test_requests_without_a_browser_like_user_agent_are_blocked(http, key, agent):
    response = http.get(f"{BASE}/trafficapi/trafficIc", params={"key": key}, headers={"User-Agent": agent})
    assert (response.status_code, response.text) == (400, "Request Blocked")


def test_unknown_operation_is_http_404(http, key):
    assert http.get(f"{BASE}/trafficapi/incident", params={"key": key}).status_code == 404


def test_removed_operation_is_http_404(world, keys):
    pctx = PlatformContext(expressway.SPEC, world, keys, removed_services=frozenset({"trafficapi/trafficIc"}))
    with TestClient(expressway.create_app(pctx), headers={"User-Agent": "kopa-tests"}) as client:
        assert client.get("/trafficapi/trafficIc", params={"key": keys.first("ex")}).status_code == 404


def test_non_numeric_paging_is_a_http_200_exception_page_or_json(http, key):
    page = http.get(f"{BASE}/locationinfo/locationinfoUnit", params={"key": key, "numOfRows": "abc"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'For input string: "abc"' in page.text
    as_json = http.get(f"{BASE}/locationinfo/locationinfoUnit", params={"key": key, "pageNo": ""},
                       headers={"Accept": "application/json"})
    assert as_json.status_code == 200 and as_json.json() == {"exception": {"message": 'For input string: ""'}}


def test_non_numeric_code_filter_is_an_exception_not_a_500(http, key):
    response = http.get(f"{BASE}/trafficapi/trafficIc", params={"key": key, "inOutType": "x"})
    assert response.status_code == 200 and 'For input string: "x"' in response.text


@pytest.mark.parametrize("kind,status,marker", [
    (FaultKind.RATE_LIMIT, 200, '"code":"ERROR"'),
    (FaultKind.SERVER_ERROR, 200, "NullPointerException"),
    (FaultKind.UNAVAILABLE, 503, "Service Unavailable"),
])
def test_fault_kinds_render_the_way_the_portal_fails(world, keys, kind, status, marker):
    profile = FaultProfile(platforms={"ex": FaultRates(**{kind.value: 1.0})})
    with TestClient(create_sandbox_app(world, keys, profile), headers={"User-Agent": "kopa-tests"}) as client:
        response = client.get(f"{BASE}/trafficapi/trafficIc", params={"key": keys.first("ex"), "type": "json"})
    assert response.status_code == status and marker in response.text


def test_chain_route_name_to_tollbooth_codes_to_hourly_volumes(http, world, key):
    units = get_json(http, "locationinfo/locationinfoUnit", key, routeName="영동선", numOfRows=100)["list"]
    assert units and {u["routeNo"] for u in units} == {"0500"}
    code = units[0]["unitCode"]
    day = world.scalar("SELECT min(sumDate) FROM ex_traffic_ic WHERE unitCode = ?", [code])
    volumes = get_json(http, "trafficapi/trafficIc", key, unitCode=code, sumDate=day, numOfRows=100)["trafficIc"]
    assert len(volumes) == 96 and sorted({v["sumTm"] for v in volumes}) == [f"{h:02d}00" for h in range(24)]
    expected = world.scalar("SELECT sum(trafficAmout) FROM ex_traffic_ic WHERE unitCode = ? AND sumDate = ?",
                            [code, day])
    assert sum(int(v["trafficAmout"]) for v in volumes) == expected
    outbound = get_json(http, "trafficapi/trafficIc", key, unitCode=code, sumDate=day, inOutType=1, numOfRows=100)
    assert outbound["count"] == 48 and {v["inoutType"] for v in outbound["trafficIc"]} == {"1"}


def test_chain_rest_area_to_fuel_price(http, world, key):
    rest_cd = world.rows("SELECT _restCd FROM ex_fuel ORDER BY stdRestCd LIMIT 1")[0]["_restCd"]
    rest = get_json(http, "locationinfo/locationinfoRest", key, stdRestCd=rest_cd)["list"][0]
    station = get_json(http, "business/curStateStation", key, serviceAreaCode=rest["serviceAreaCode"])["list"][0]
    assert station["serviceAreaName"] == rest["unitName"]
    oil = get_json(http, "restinfo/restOilList", key, stdRestCd=f"{int(rest_cd) + 1:06d}")["list"]
    assert [(o["gasolinePrice"], o["diselPrice"]) for o in oil] == [(station["gasolinePrice"], station["diselPrice"])]
    brands = get_json(http, "restinfo/restBrandList", key, stdRestCd=rest_cd)["list"]
    assert brands and {b["stdRestCd"] for b in brands} == {rest_cd}
