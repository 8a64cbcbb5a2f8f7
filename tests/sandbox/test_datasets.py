"""The district long tail: the dataset catalog, and every dataset served on Gyeonggi and Seoul."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from sandbox.platforms.datasets import (
    gyeonggi_dataset_services,
    seoul_dataset_services,
)
from sandbox.world.district.geo import SEOUL_CODES, tm5174
from sandbox.world.facts import SEOUL_DISTRICTS

NO_DATA = {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}
HANGUL = re.compile("[가-힣]")


@pytest.fixture(scope="module")
def catalog(world) -> list[dict]:
    rows = world.rows("SELECT * FROM district_datasets ORDER BY dataset_id")
    for r in rows:
        r["fields"], r["filters"], r["storage"] = (json.loads(r[k]) for k in ("fields", "filters", "storage"))
    return rows


def names(entry: dict) -> list[str]:
    return [f["name"] for f in entry["fields"]]


def test_catalog_lists_at_least_2250_distinct_datasets_with_korean_metadata(catalog):
    assert len(catalog) >= 2250
    assert len({(e["platform"], e["service"]) for e in catalog}) == len(catalog)
    assert {e["platform"] for e in catalog} == {"gg", "seoul"}
    for e in catalog:
        assert HANGUL.search(e["title_ko"]) and len(e["description_ko"]) > 60, e["service"]
        assert e["fields"] and all(f["name"] and f["type"] in ("string", "number", "date")
                                   and HANGUL.search(f["description_ko"]) for f in e["fields"]), e["service"]
        assert len(set(names(e))) == len(names(e)), e["service"]
        assert {f["field"] for f in e["filters"]} <= set(names(e)), e["service"]
        assert e["storage"]["table"] == f"{e['platform'] if e['platform'] == 'gg' else 'seoul'}_dataset_rows"


def test_catalog_row_counts_match_the_stored_rows(world, catalog):
    counts = {r["_ds"]: r["n"] for r in world.rows(
        "SELECT _ds, count(*) AS n FROM gg_dataset_rows GROUP BY _ds UNION ALL "
        "SELECT _ds, count(*) AS n FROM seoul_dataset_rows GROUP BY _ds")}
    assert all(counts.get(e["dataset_id"], 0) == e["row_count"] for e in catalog)
    sizes = np.array([e["row_count"] for e in catalog])
    assert sizes.max() > 20 * np.median(sizes)  # heavy-tailed: a few very large datasets


def test_services_are_declared_for_every_catalog_entry(world, catalog):
    gg = {s.name for s in gyeonggi_dataset_services(world)}
    seoul = {s.name for s in seoul_dataset_services(world)}
    assert gg == {e["service"] for e in catalog if e["platform"] == "gg"}
    assert seoul == {e["service"] for e in catalog if e["platform"] == "seoul"}


def test_every_gyeonggi_dataset_is_served_with_its_catalog_total_and_fields(client, keys, catalog):
    key = keys.first("gg")
    for e in (e for e in catalog if e["platform"] == "gg"):
        body = client.get(f"/gg/{e['service']}", params={"KEY": key, "Type": "json", "pSize": 1}).json()
        if e["row_count"] == 0:
            assert body == NO_DATA, e["service"]
            continue
        head, rows = body[e["service"]][0]["head"], body[e["service"]][1]["row"]
        assert head[0] == {"list_total_count": e["row_count"]}, e["service"]
        assert list(rows[0]) == names(e), e["service"]


def test_every_seoul_dataset_is_served_with_its_catalog_total_and_fields(client, keys, catalog):
    key = keys.first("seoul")
    for e in (e for e in catalog if e["platform"] == "seoul"):
        body = client.get(f"/seoul/{key}/json/{e['service']}/1/1").json()
        if e["row_count"] == 0:
            assert body == NO_DATA, e["service"]
            continue
        assert body[e["service"]]["list_total_count"] == e["row_count"], e["service"]
        assert list(body[e["service"]]["row"][0]) == names(e), e["service"]


def test_all_stored_coordinates_lie_inside_their_province(world):
    gg = world.rows("SELECT min(REFINE_WGS84_LAT) AS lat0, max(REFINE_WGS84_LAT) AS lat1, min(REFINE_WGS84_LOGT) AS lon0, "
                    "max(REFINE_WGS84_LOGT) AS lon1 FROM gg_dataset_rows")[0]
    seoul = world.rows("SELECT min(_lat) AS lat0, max(_lat) AS lat1, min(_lon) AS lon0, max(_lon) AS lon1 "
                       "FROM seoul_dataset_rows")[0]
    assert 36.89 < gg["lat0"] and gg["lat1"] < 38.29 and 126.37 < gg["lon0"] and gg["lon1"] < 127.86
    assert 37.42 < seoul["lat0"] and seoul["lat1"] < 37.71 and 126.76 < seoul["lon0"] and seoul["lon1"] < 127.19


def test_seoul_localdata_service_over_http_has_the_seoul_envelope(http, keys, world, catalog):
    (e,) = [e for e in catalog if e["service"] == "LOCALDATA_072404_GN"]  # 강남구 일반음식점
    key = keys.first("seoul")
    body = http.get(f"/seoul/{key}/json/LOCALDATA_072404_GN/1/5").json()
    svc = body["LOCALDATA_072404_GN"]
    assert svc["list_total_count"] == e["row_count"]
    assert svc["RESULT"] == {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다"}
    for r in svc["row"]:
        assert list(r) == names(e)
        assert r["OPNSFTEAMCODE"] == "3220000" and r["MGTNO"].startswith("3220000-")
        assert r["RDNWHLADDR"].startswith("서울특별시 강남구 ") and r["SITEWHLADDR"].startswith("서울특별시 강남구 ")
        assert r["TRDSTATENM"] in ("영업/정상", "휴업", "폐업") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["APVPERMYMD"])
        assert 190_000 < float(r["X"]) < 220_000 and 435_000 < float(r["Y"]) < 470_000  # EPSG:5174 metres in Seoul
        assert all(isinstance(v, str) for v in r.values())  # nulls print as ""


def test_seoul_localdata_status_path_parameter_filters_operating_businesses(http, keys, world, catalog):
    (e,) = [e for e in catalog if e["service"] == "LOCALDATA_072404_GN"]
    expected = world.scalar("SELECT count(*) FROM seoul_dataset_rows WHERE _ds = ? AND TRDSTATEGBN = '01'",
                            [e["dataset_id"]])
    body = http.get(f"/seoul/{keys.first('seoul')}/json/LOCALDATA_072404_GN/1/3/01").json()
    assert body["LOCALDATA_072404_GN"]["list_total_count"] == expected
    assert {r["TRDSTATEGBN"] for r in body["LOCALDATA_072404_GN"]["row"]} == {"01"}


def test_seoul_dataset_xml_and_window_rules(http, keys):
    key = keys.first("seoul")
    root = ET.fromstring(http.get(f"/seoul/{key}/xml/LOCALDATA_072404_GN/1/2").content)
    assert root.tag == "LOCALDATA_072404_GN" and len(root.findall("row")) == 2
    assert root.findtext("RESULT/CODE") == "INFO-000"
    assert http.get(f"/seoul/{key}/json/LOCALDATA_072404_GN/1/1001").json()["RESULT"]["CODE"] == "ERROR-336"
    assert http.get(f"/seoul/{key}/json/LOCALDATA_072404_GN/999999/1000000").json() == NO_DATA
    assert http.get("/seoul/wrongkey/json/LOCALDATA_072404_GN/1/5").headers["content-type"].startswith("text/xml")


def test_every_seoul_district_has_its_localdata_restaurant_service(catalog):
    services = {e["service"]: e for e in catalog if e["platform"] == "seoul"}
    for d in SEOUL_DISTRICTS:
        e = services[f"LOCALDATA_072404_{SEOUL_CODES[d.name][0]}"]
        assert (e["region_code"], e["region_name"]) == (d.code, d.name)
        assert e["title_ko"] == f"서울시 {d.name} 일반음식점 인허가 정보"


def test_seoul_facility_dataset_filters_by_district_path_parameter(http, keys, world, catalog):
    (e,) = [e for e in catalog if e["service"] == "TbPublicWifiInfo"]
    gu = world.rows("SELECT _gu FROM seoul_dataset_rows WHERE _ds = ? ORDER BY _seq DESC LIMIT 1",
                    [e["dataset_id"]])[0]["_gu"]
    body = http.get(f"/seoul/{keys.first('seoul')}/json/TbPublicWifiInfo/1/1000/{gu}").json()["TbPublicWifiInfo"]
    assert body["list_total_count"] == world.scalar(
        "SELECT count(*) FROM seoul_dataset_rows WHERE _ds = ? AND _gu = ?", [e["dataset_id"], gu])
    assert {r["CGG_NM"] for r in body["row"]} == {gu}
    assert all(37.4 < float(r["LAT"]) < 37.72 and 126.75 < float(r["LOT"]) < 127.2 for r in body["row"])


def test_seoul_statistics_filter_by_year_and_district(http, keys):
    body = http.get(f"/seoul/{keys.first('seoul')}/json/SeoulPopulationStat/1/100/2024/강남구").json()
    rows = body["SeoulPopulationStat"]["row"]
    assert body["SeoulPopulationStat"]["list_total_count"] == len(rows) == 17  # one row per age group
    assert {(r["GIGAN"], r["JACHIGU"]) for r in rows} == {("2024", "강남구")}


def test_gyeonggi_statistics_are_published_per_year(http, keys, catalog):
    years = sorted(e["year"] for e in catalog if e["platform"] == "gg" and e["service"].startswith("PopulationStat"))
    assert years == list(range(2019, 2026))
    body = http.get("/gg/PopulationStat2024", params={"KEY": keys.first("gg"), "Type": "json", "SIGUN_CD": "41110",
                                                       "pSize": 100}).json()
    rows = body["PopulationStat2024"][1]["row"]
    assert len(rows) == 17 and {(r["STD_YY"], r["SIGUN_NM"]) for r in rows} == {("2024", "수원시")}


def test_empty_datasets_answer_info_200(http, keys, catalog):
    empty = [e for e in catalog if e["row_count"] == 0 and e["platform"] == "seoul"]
    assert empty  # e.g. Seoul has no livestock farms or ski resorts
    assert http.get(f"/seoul/{keys.first('seoul')}/json/{empty[0]['service']}/1/5").json() == NO_DATA


def test_tm5174_projection_is_consistent_with_seoul_geography():
    x, y = tm5174(np.array([37.5665, 37.5665, 37.6]), np.array([126.978, 127.078, 126.978]))
    assert 195_000 < x[0] < 200_000 and 448_000 < y[0] < 455_000  # Seoul City Hall
    assert abs((x[1] - x[0]) - 8_840) < 100  # 0.1° of longitude at 37.57°N
    assert abs((y[2] - y[0]) - 3_730) < 50  # 0.0335° of latitude
