"""NEIS (open.neis.go.kr/hub) and 학교알리미 (/openApi.do) emulation, over real HTTP on loopback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.testclient import TestClient

from sandbox import create_sandbox_app
from sandbox.faults import FaultKind, FaultProfile, FaultRates
from sandbox.platforms import edu
from sandbox.world.facts import PROVINCES

HUB = "/neis/hub"
OPEN_API = "/schoolinfo/openApi.do"
NO_DATA = {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}


@pytest.fixture(scope="module")
def key(keys):
    return keys.first("edu")


def hub(http, service, **params):
    return http.get(f"{HUB}/{service}", params={"Type": "json", **params})


def rows_of(body, service):
    return body[service][1]["row"]


def total_of(body, service):
    return body[service][0]["head"][0]["list_total_count"]


def a_school(world, kind="04"):
    return world.rows("SELECT * FROM edu_school WHERE _kind_code = ? ORDER BY SD_SCHUL_CODE LIMIT 1", [kind])[0]


def test_school_info_returns_the_neis_envelope_with_every_field(http, key, world):
    school = a_school(world)
    body = hub(http, "schoolInfo", KEY=key, SD_SCHUL_CODE=school["SD_SCHUL_CODE"]).json()
    head = body["schoolInfo"][0]["head"]
    assert head == [{"list_total_count": 1}, {"RESULT": {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다."}}]
    expected = {k: (None if v is None else str(v)) for k, v in school.items() if not k.startswith("_")}
    assert rows_of(body, "schoolInfo") == [expected]
    assert list(expected)[:4] == ["ATPT_OFCDC_SC_CODE", "ATPT_OFCDC_SC_NM", "SD_SCHUL_CODE", "SCHUL_NM"]


def test_school_info_matches_school_names_by_substring(http, key, world):
    school = a_school(world)
    fragment = school["SCHUL_NM"][1:-2]
    names = [r["SCHUL_NM"] for r in rows_of(hub(http, "schoolInfo", KEY=key, SCHUL_NM=fragment, pSize=1000).json(),
                                          "schoolInfo")]
    assert school["SCHUL_NM"] in names and all(fragment in n for n in names)


def test_school_info_pages_with_pindex_and_psize(http, key, world):
    office = "B10"
    total = world.scalar("SELECT count(*) FROM edu_school WHERE ATPT_OFCDC_SC_CODE = ?", [office])
    first = hub(http, "schoolInfo", KEY=key, ATPT_OFCDC_SC_CODE=office, pIndex=1, pSize=3).json()
    second = hub(http, "schoolInfo", KEY=key, ATPT_OFCDC_SC_CODE=office, pIndex=2, pSize=3).json()
    codes = [r["SD_SCHUL_CODE"] for r in rows_of(first, "schoolInfo") + rows_of(second, "schoolInfo")]
    expected = [r["SD_SCHUL_CODE"] for r in world.rows(
        "SELECT SD_SCHUL_CODE FROM edu_school WHERE ATPT_OFCDC_SC_CODE = ? ORDER BY SD_SCHUL_CODE LIMIT 6", [office])]
    assert total_of(first, "schoolInfo") == total and codes == expected


def test_more_than_1000_rows_per_call_is_error_336(http, key):
    assert hub(http, "schoolInfo", KEY=key, pSize=1001).json() == {"RESULT": {
        "CODE": "ERROR-336", "MESSAGE": "데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다."}}


def test_non_integer_page_index_is_error_333(http, key):
    assert hub(http, "schoolInfo", KEY=key, pIndex="first").json()["RESULT"]["CODE"] == "ERROR-333"


def test_no_match_answers_info_200_without_the_service_wrapper(http, key):
    r = hub(http, "schoolInfo", KEY=key, SCHUL_NM="존재하지않는학교명")
    assert (r.status_code, r.json()) == (200, NO_DATA)


def test_wrong_key_is_error_290_as_xml_by_default(http):
    r = http.get(f"{HUB}/schoolInfo", params={"KEY": "0" * 32})
    root = ET.fromstring(r.content)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml")
    assert (root.tag, root.findtext("CODE")) == ("RESULT", "ERROR-290")


def test_keyless_calls_run_in_five_row_sample_mode(http, world):
    body = http.get(f"{HUB}/schoolInfo", params={"Type": "json", "pSize": 100}).json()
    assert len(rows_of(body, "schoolInfo")) == 5
    assert total_of(body, "schoolInfo") == world.count("edu_school")


def test_xml_is_the_default_format_and_lists_rows(http, key, world):
    school = a_school(world)
    r = http.get(f"{HUB}/schoolInfo", params={"KEY": key, "SD_SCHUL_CODE": school["SD_SCHUL_CODE"]})
    root = ET.fromstring(r.content)
    assert root.tag == "schoolInfo" and root.findtext("head/list_total_count") == "1"
    assert root.findtext("row/SCHUL_NM") == school["SCHUL_NM"]


def test_unknown_service_is_error_310(http, key):
    assert hub(http, "schoolInfox", KEY=key).json()["RESULT"]["CODE"] == "ERROR-310"


def test_class_info_requires_office_and_school_codes(http, key):
    assert hub(http, "classInfo", KEY=key, AY="2025").json()["RESULT"]["CODE"] == "ERROR-300"


def test_class_info_lists_one_row_per_class_of_the_year(http, key, world):
    school = a_school(world, "03")
    body = hub(http, "classInfo", KEY=key, ATPT_OFCDC_SC_CODE=school["ATPT_OFCDC_SC_CODE"],
               SD_SCHUL_CODE=school["SD_SCHUL_CODE"], AY="2025", GRADE="1").json()
    rows = rows_of(body, "classInfo")
    status = world.rows("SELECT _c1 FROM edu_status WHERE _sd_schul_code = ? AND _pban_yr = 2025",
                        [school["SD_SCHUL_CODE"]])[0]
    assert [r["CLASS_NM"] for r in rows] == [str(i) for i in range(1, status["_c1"] + 1)]
    assert set(rows[0]) == {"ATPT_OFCDC_SC_CODE", "ATPT_OFCDC_SC_NM", "SD_SCHUL_CODE", "SCHUL_NM", "AY", "GRADE",
                            "DGHT_CRSE_SC_NM", "SCHUL_CRSE_SC_NM", "ORD_SC_NM", "DDDEP_NM", "CLASS_NM", "LOAD_DTM"}
    assert {(r["AY"], r["GRADE"], r["SCHUL_CRSE_SC_NM"]) for r in rows} == {("2025", "1", "중학교")}


def test_school_major_info_lists_the_majors_of_high_schools(http, key, world):
    school = a_school(world, "04")
    body = hub(http, "schoolMajorinfo", KEY=key, ATPT_OFCDC_SC_CODE=school["ATPT_OFCDC_SC_CODE"],
               SD_SCHUL_CODE=school["SD_SCHUL_CODE"]).json()
    majors = world.rows("SELECT DDDEP_NM FROM edu_major WHERE SD_SCHUL_CODE = ? ORDER BY DDDEP_NM",
                        [school["SD_SCHUL_CODE"]])
    assert [r["DDDEP_NM"] for r in rows_of(body, "schoolMajorinfo")] == [m["DDDEP_NM"] for m in majors]


# --- 학교알리미 ------------------------------------------------------------------------------

def open_api(http, **params):
    return http.get(OPEN_API, params=params)


def a_region(world, kind: str):
    return world.rows("SELECT _sido_code, _sgg_code FROM edu_school WHERE _kind_code = ? "
                      "ORDER BY _sgg_code LIMIT 1", [kind])[0]


def test_school_status_lists_every_school_of_the_kind_in_the_sgg(http, key, world):
    region = a_region(world, "03")
    body = open_api(http, apiKey=key, apiType="62", pbanYr="2025", schulKndCode="03",
                    sidoCode=region["_sido_code"], sggCode=region["_sgg_code"]).json()
    expected = world.rows("SELECT * FROM edu_status WHERE _sgg_code = ? AND SCHUL_KND_SC_CODE = '03' "
                          "AND _pban_yr = 2025 ORDER BY SCHUL_CODE", [region["_sgg_code"]])
    assert (body["resultCode"], body["resultMsg"]) == ("success", "정상 처리되었습니다.")
    assert [r["SCHUL_CODE"] for r in body["list"]] == [e["SCHUL_CODE"] for e in expected]
    row, src = body["list"][0], expected[0]
    if src["PBAN_EXCP_YN"] == "N":
        classes, students = src["_c1"] + src["_c2"] + src["_c3"], src["_s1"] + src["_s2"] + src["_s3"]
        assert row["COL_SUM"] == f"{classes}({src['_sp_classes']})"
        assert row["COL_FGR_SUM"] == f"{students}({src['_sp_students']})"
        assert (row["SP_SUM"], row["SP_FGR_SUM"]) == (str(src["_sp_classes"]), str(src["_sp_students"]))
    assert all(isinstance(v, str) for v in row.values())


def test_students_per_grade_agree_with_the_status_totals(http, key, world):
    region = a_region(world, "02")
    params = dict(apiKey=key, pbanYr="2024", schulKndCode="02", sggCode=region["_sgg_code"])
    status = {r["SCHUL_CODE"]: r for r in open_api(http, apiType="62", **params).json()["list"]}
    for row in open_api(http, apiType="09", **params).json()["list"]:
        if row["PBAN_EXCP_YN"] == "N":
            assert sum(int(row[f"COL_S{g}"]) for g in range(1, 7)) == int(row["COL_S_SUM"])
            assert status[row["SCHUL_CODE"]]["COL_FGR_SUM"].startswith(row["COL_S_SUM"] + "(")


def test_school_basics_need_no_disclosure_year(http, key, world):
    region = a_region(world, "04")
    body = open_api(http, apiKey=key, apiType="0", schulKndCode="04", sggCode=region["_sgg_code"]).json()
    names = world.rows("SELECT SCHUL_NM FROM edu_school WHERE _sgg_code = ? AND _kind_code = '04' ORDER BY _pbi_code",
                       [region["_sgg_code"]])
    assert [r["SCHUL_NM"] for r in body["list"]] == [n["SCHUL_NM"] for n in names]
    assert {"LTTUD", "LGTUD", "SCHUL_RDNMA", "USER_TELNO", "HMPG_ADRES"} <= set(body["list"][0])


@pytest.mark.parametrize(("params", "message"), [
    ({"apiType": "62", "pbanYr": "2025", "schulKndCode": "03"}, "시군구 코드(sggCode)는 필수 정보입니다."),
    ({"apiType": "62", "schulKndCode": "03", "sggCode": "50110"}, "공시년도(pbanYr)는 필수 정보입니다."),
    ({"apiType": "62", "pbanYr": "2025", "sggCode": "50110"}, "학교급 코드(schulKndCode)는 필수 정보입니다."),
    ({"apiType": "99", "pbanYr": "2025", "schulKndCode": "03", "sggCode": "50110"}, "API 유형(apiType)이 유효하지 않습니다."),
])
def test_missing_or_bad_parameters_fail_with_http_200(http, key, params, message):
    r = open_api(http, apiKey=key, **params)
    assert (r.status_code, r.json()) == (200, {"resultCode": "fail", "resultMsg": message})


def test_wrong_api_key_fails(http):
    r = open_api(http, apiKey="nope", apiType="62", pbanYr="2025", schulKndCode="03", sggCode="50110")
    assert r.json() == {"resultCode": "fail", "resultMsg": "인증키가 유효하지 않습니다."}


def test_disclosure_years_outside_the_served_window_are_empty(http, key, world):
    region = a_region(world, "02")
    body = open_api(http, apiKey=key, apiType="62", pbanYr="2019", schulKndCode="02",
                    sggCode=region["_sgg_code"]).json()
    assert body == {"resultCode": "success", "resultMsg": "정상 처리되었습니다.", "list": []}


def test_chain_province_to_office_to_schools_to_special_education_students(http, key, world):
    """Figure 1: special-education students in Jeju middle schools in 2021, found through the APIs."""
    jeju = next(p for p in PROVINCES if p.short == "제주")
    schools, page = [], 1
    while True:  # page through NEIS schoolInfo, 10 at a time
        r = hub(http, "schoolInfo", KEY=key, ATPT_OFCDC_SC_CODE=jeju.neis_office, SCHUL_KND_SC_NM="중학교",
                pIndex=page, pSize=10).json()
        if "RESULT" in r:
            break
        schools += rows_of(r, "schoolInfo")
        page += 1
    assert len(schools) == world.count("edu_school", "_sido_code = '50' AND _kind_code = '03'")
    sggs = sorted({r["_sgg_code"] for r in world.rows(
        "SELECT _sgg_code FROM edu_school WHERE _sido_code = '50'")})
    total = 0
    for sgg in sggs:
        body = open_api(http, apiKey=key, apiType="62", pbanYr="2021", schulKndCode="03",
                        sidoCode=jeju.code, sggCode=sgg).json()
        total += sum(int(r["SP_FGR_SUM"] or 0) for r in body["list"])
    assert total == world.scalar("SELECT coalesce(sum(_sp_students), 0) FROM edu_status WHERE _sido_code = '50' "
                                 "AND SCHUL_KND_SC_CODE = '03' AND _pban_yr = 2021 AND PBAN_EXCP_YN = 'N'")


# --- faults -------------------------------------------------------------------------------------

def fault_request(path: str, query: str = "") -> Request:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query.encode(),
             "headers": Headers({"host": "sandbox"}).raw}
    return Request(scope)


@pytest.mark.parametrize(("kind", "code"), [(FaultKind.RATE_LIMIT, "ERROR-337"), (FaultKind.SERVER_ERROR, "ERROR-500")])
def test_neis_faults_use_the_hub_error_codes(kind, code):
    r = edu.fault_response(kind, fault_request("/neis/hub/schoolInfo", "Type=json"))
    assert (r.status_code, r.body.decode()) == (200, '{"RESULT":{"CODE":"%s","MESSAGE":"%s"}}' % (
        code, {"ERROR-337": "일별 트래픽 제한을 넘은 호출입니다. 오늘은 더이상 호출할 수 없습니다.",
               "ERROR-500": "서버 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다."}[code]))


def test_neis_outage_is_a_503_page():
    r = edu.fault_response(FaultKind.UNAVAILABLE, fault_request("/neis/hub/schoolInfo"))
    assert r.status_code == 503 and r.media_type == "text/html"


@pytest.mark.parametrize(("kind", "status"), [(FaultKind.SERVER_ERROR, 500), (FaultKind.UNAVAILABLE, 503)])
def test_schoolinfo_server_faults_are_html_error_pages(kind, status):
    r = edu.fault_response(kind, fault_request("/schoolinfo/openApi.do"))
    assert r.status_code == status and r.media_type == "text/html"


def test_rate_limit_through_the_sandbox_app_renders_the_platform_answer(world, keys, key):
    app = create_sandbox_app(world, keys, FaultProfile(platforms={"edu": FaultRates(rate_limit=1.0)}))
    with TestClient(app, base_url="http://sandbox") as c:
        assert c.get(f"{HUB}/schoolInfo", params={"KEY": key, "Type": "json"}).json()["RESULT"]["CODE"] == "ERROR-337"
        body = c.get(OPEN_API, params={"apiKey": key, "apiType": "0", "schulKndCode": "02", "sggCode": "50110"}).json()
        assert body == {"resultCode": "fail", "resultMsg": "일일 트래픽 제한을 초과하였습니다."}
