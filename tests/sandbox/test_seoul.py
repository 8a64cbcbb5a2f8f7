"""Seoul Open Data Plaza transport services over real HTTP: envelope, paging, errors, chains."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime

import pytest
from starlette.testclient import TestClient

from sandbox import create_sandbox_app
from sandbox.faults import FaultKind, FaultProfile, FaultRates


@pytest.fixture(scope="module")
def key(keys) -> str:
    return keys.first("seoul")


def seoul(http, key: str, *segments, fmt: str = "json"):
    response = http.get("/seoul/" + "/".join([key, fmt, *map(str, segments)]))
    assert response.status_code == 200
    return response


def latest_day(world) -> str:
    return world.scalar("SELECT max(USE_YMD) FROM seoul_subway_ridership")


def test_subway_stats_success_envelope_and_fields(http, world, key):
    day = latest_day(world)
    body = seoul(http, key, "CardSubwayStatsNew", 1, 5, day).json()
    page = body["CardSubwayStatsNew"]
    assert page["RESULT"] == {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다"}
    assert page["list_total_count"] == world.count("seoul_subway_station")
    assert list(page["row"][0]) == ["USE_YMD", "SBWY_ROUT_LN_NM", "SBWY_STNS_NM", "GTON_TNOPE", "GTOFF_TNOPE",
                                    "REG_YMD"]
    assert all(isinstance(v, str) for v in page["row"][0].values())
    lag = datetime.strptime(page["row"][0]["REG_YMD"], "%Y%m%d") - datetime.strptime(day, "%Y%m%d")
    assert lag.days in (3, 4)


def test_a_day_of_subway_stats_has_one_row_per_station_and_line(world):
    day = latest_day(world)
    stations = world.count("seoul_subway_station")
    assert stations >= 300
    assert world.count("seoul_subway_ridership", "USE_YMD = ?", [day]) == stations
    assert world.scalar("SELECT count(DISTINCT USE_YMD) FROM seoul_subway_ridership") >= 30


def test_missing_required_date_is_error_300(http, key):
    assert seoul(http, key, "CardSubwayStatsNew", 1, 5).json() == {
        "RESULT": {"CODE": "ERROR-300", "MESSAGE": "필수 값이 누락되어 있습니다. 요청인자를 참고 하십시오."}}


def test_more_than_1000_rows_is_error_336(http, world, key):
    body = seoul(http, key, "CardSubwayStatsNew", 1, 1001, latest_day(world)).json()
    assert body["RESULT"]["CODE"] == "ERROR-336"


def test_window_past_the_end_is_a_wrapperless_info_200(http, world, key):
    body = seoul(http, key, "CardSubwayStatsNew", 5000, 5001, latest_day(world)).json()
    assert body == {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}


def test_windows_page_without_overlap(http, world, key):
    day = latest_day(world)
    first = seoul(http, key, "CardSubwayStatsNew", 1, 3, day).json()["CardSubwayStatsNew"]["row"]
    second = seoul(http, key, "CardSubwayStatsNew", 4, 6, day).json()["CardSubwayStatsNew"]["row"]
    both = seoul(http, key, "CardSubwayStatsNew", 1, 6, day).json()["CardSubwayStatsNew"]["row"]
    assert first + second == both


def test_wrong_key_answers_info_100_as_xml_even_on_json(http):
    response = seoul(http, "0" * 30, "bikeList", 1, 5)
    root = ET.fromstring(response.content)
    assert root.tag == "RESULT" and root.findtext("CODE") == "INFO-100"


def test_sample_key_sees_at_most_five_rows(http):
    assert seoul(http, "sample", "bikeList", 1, 6).json()["RESULT"]["CODE"] == "ERROR-335"
    assert len(seoul(http, "sample", "bikeList", 1, 5).json()["rentBikeStatus"]["row"]) == 5


def test_non_integer_window_is_error_333_not_a_500(http, key):
    assert seoul(http, key, "tbCycleStationInfo", "a", 5).json()["RESULT"]["CODE"] == "ERROR-333"


@pytest.mark.parametrize("service,wrapper,fields", [
    ("bikeList", "rentBikeStatus", ["rackTotCnt", "stationName", "parkingBikeTotCnt", "shared", "stationLatitude",
                                    "stationLongitude", "stationId"]),
    ("tbCycleStationInfo", "stationInfo", ["RENT_ID", "RENT_NO", "RENT_NM", "RENT_ID_SE", "STA_LOC", "STA_ADD1",
                                           "STA_ADD2", "STA_LAT", "STA_LONG", "HOLD_NUM"]),
    ("SearchSTNBySubwayLineInfo", "SearchSTNBySubwayLineInfo", ["STATION_CD", "STATION_NM", "LINE_NUM", "FR_CODE"]),
    ("busStopLocationXyInfo", "busStopLocationXyInfo", ["STOPS_NO", "STOPS_NM", "XCRD", "YCRD", "NODE_ID",
                                                        "STOPS_TYPE"]),
])
def test_services_answer_under_their_live_wrapper_key(http, key, service, wrapper, fields):
    body = seoul(http, key, service, 1, 2).json()
    assert list(body) == [wrapper] and list(body[wrapper]["row"][0]) == fields


def test_xml_uses_the_wrapper_as_root(http, key):
    root = ET.fromstring(seoul(http, key, "bikeList", 1, 2, fmt="xml").content)
    assert root.tag == "rentBikeStatus" and len(root.findall("row")) == 2
    assert root.findtext("RESULT/CODE") == "INFO-000"


def test_subway_station_search_uses_real_codes(http, key):
    rows = seoul(http, key, "SearchSTNBySubwayLineInfo", 1, 10, " ", "서울역", "01호선").json()
    assert rows["SearchSTNBySubwayLineInfo"]["row"] == [
        {"STATION_CD": "0150", "STATION_NM": "서울역", "LINE_NUM": "01호선", "FR_CODE": "133"}]


def test_bus_stops_carry_five_digit_ars_numbers(world):
    numbers = [r["STOPS_NO"] for r in world.rows("SELECT STOPS_NO FROM seoul_bus_stop")]
    assert all(len(n) == 5 and n.isdigit() and 1 <= int(n[:2]) <= 25 for n in numbers)


@pytest.mark.parametrize("kind,code", [(FaultKind.RATE_LIMIT, "ERROR-337"), (FaultKind.SERVER_ERROR, "ERROR-500")])
def test_fault_kinds_render_as_seoul_result_codes(world, keys, kind, code):
    profile = FaultProfile(platforms={"seoul": FaultRates(**{kind.value: 1.0})})
    with TestClient(create_sandbox_app(world, keys, profile)) as client:
        response = client.get(f"/seoul/{keys.first('seoul')}/json/bikeList/1/5")
    assert response.json()["RESULT"]["CODE"] == code


def test_chain_station_name_to_daily_boardings(http, world, key):
    station = world.rows("SELECT STATION_NM FROM seoul_subway_station GROUP BY STATION_NM "
                         "HAVING count(*) > 1 ORDER BY STATION_NM LIMIT 1")[0]["STATION_NM"]
    lines = seoul(http, key, "SearchSTNBySubwayLineInfo", 1, 20, " ", station).json()["SearchSTNBySubwayLineInfo"]
    exact = [r for r in lines["row"] if r["STATION_NM"] == station]
    day = latest_day(world)
    rows = seoul(http, key, "CardSubwayStatsNew", 1, 20, day, " ", station).json()["CardSubwayStatsNew"]["row"]
    assert len(rows) == len(exact) >= 2
    expected = world.scalar("SELECT sum(GTON_TNOPE) FROM seoul_subway_ridership WHERE USE_YMD = ? "
                            "AND SBWY_STNS_NM = ?", [day, station])
    assert sum(int(r["GTON_TNOPE"]) for r in rows) == expected


def test_chain_bus_route_number_to_boardings_per_stop(http, world, key):
    route = world.rows("SELECT ROUTE_NM FROM seoul_bus_route ORDER BY ROUTE_ID LIMIT 1")[0]["ROUTE_NM"]
    day = world.scalar("SELECT max(USE_YMD) FROM seoul_bus_ridership")
    body = seoul(http, key, "CardBusStatisticsServiceNew", 1, 1000, day, route).json()["CardBusStatisticsServiceNew"]
    assert {r["RTE_NO"] for r in body["row"]} == {route}
    assert body["list_total_count"] == world.count("seoul_bus_ridership", "USE_YMD = ? AND RTE_NO = ?", [day, route])
    assert all(len(r["STOPS_ARS_NO"]) == 5 and r["SBWY_STNS_NM"] for r in body["row"])


def page_all(http, key: str, service: str, wrapper: str, *filters) -> list[dict]:
    rows, start = [], 1
    while True:
        body = seoul(http, key, service, start, start + 999, *filters).json()
        if wrapper not in body:
            return rows
        rows += body[wrapper]["row"]
        start += 1000


def test_chain_district_to_bike_stations_to_monthly_rentals(http, world, key):
    stations = page_all(http, key, "tbCycleStationInfo", "stationInfo")
    assert len(stations) == world.count("seoul_bike_station")
    district = world.rows("SELECT STA_LOC FROM seoul_bike_station ORDER BY _no LIMIT 1")[0]["STA_LOC"]
    station = next(s for s in stations if s["STA_LOC"] == district)
    label = f"{int(station['RENT_NO'])}. {station['RENT_NM']}"
    month = world.scalar("SELECT max(RENT_NM) FROM seoul_bike_rent_month")
    rentals = [r for r in page_all(http, key, "tbCycleRentUseMonthInfo", "cycleRentUseMonthInfo", month)
               if r["STATION_NAME"] == label]
    expected = world.scalar("SELECT sum(USE_CNT) FROM seoul_bike_rent_month WHERE RENT_NM = ? AND STATION_NAME = ?",
                            [month, label])
    assert rentals and sum(int(r["USE_CNT"]) for r in rentals) == expected
    live = seoul(http, key, "bikeList", 1, 1000).json()["rentBikeStatus"]["row"]
    assert any(b["stationId"] == station["RENT_ID"] and b["stationName"] == label for b in live)
