"""HRD Korea (data.go.kr B490007) emulation, over real HTTP on loopback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.requests import Request

from sandbox.faults import FaultKind
from sandbox.platforms import hrdk

BASE = "/datago/B490007"
NO_DATA = {"header": {"resultCode": "03", "resultMsg": "NODATA_ERROR"}}


@pytest.fixture(scope="module")
def key(keys):
    return keys.first("hrdk")


def get(http, path, **params):
    return http.get(f"{BASE}{path}", params={"dataFormat": "json", **params})


def qual(world, name):
    return world.rows("SELECT * FROM hrdk_qual WHERE jmNm = ?", [name])[0]


def test_exam_schedule_uses_the_envelope_without_response_root(http, key, world):
    body = get(http, "/qualExamSchd/getQualExamSchdList", serviceKey=key, implYy="2025", qualgbCd="T").json()
    total = world.count("hrdk_exam_schd", "implYy = '2025' AND qualgbCd = 'T'")
    assert body["header"] == {"resultCode": "00", "resultMsg": "NORMAL SERVICE"}
    assert (body["body"]["totalCount"], body["body"]["numOfRows"], body["body"]["pageNo"]) == (total, 10, 1)
    item = body["body"]["items"][0]
    assert list(item) == ["implYy", "implSeq", "qualgbCd", "qualgbNm", "description", "docRegStartDt", "docRegEndDt",
                          "docExamStartDt", "docExamEndDt", "docPassDt", "pracRegStartDt", "pracRegEndDt",
                          "pracExamStartDt", "pracExamEndDt", "pracPassDt"]
    assert isinstance(item["implSeq"], int) and item["qualgbNm"] == "국가기술자격"


def test_chain_qualification_name_to_code_to_schedule_and_pass_rates(http, key, world):
    jm = qual(world, "정보처리기사")["jmCd"]
    assert jm == "1320"
    rounds = get(http, "/qualExamSchd/getQualExamSchdList", serviceKey=key, implYy="2025", jmCd=jm).json()
    assert [i["description"] for i in rounds["body"]["items"]] == [
        f"국가기술자격 기사 (2025년도 제{n}회)" for n in (1, 2, 3)]
    rates = get(http, "/qualPassRate/getQualPassRateList", serviceKey=key, jmCd=jm, baseYY="2024").json()
    expected = world.rows("SELECT * FROM hrdk_pass_rate WHERE jmCd = ? AND statisYy = '2024'", [jm])[0]
    assert rates["body"]["items"] == [{k: str(v) for k, v in expected.items()}]


def test_professional_qualifications_have_blank_second_stage_dates(http, key, world):
    body = get(http, "/qualExamSchd/getQualExamSchdList", serviceKey=key, implYy="2025", qualgbCd="S",
               numOfRows=100).json()
    assert any(i["pracExamStartDt"] == "" for i in body["body"]["items"])
    assert all(len(i["docExamStartDt"]) == 8 for i in body["body"]["items"])


def test_unknown_qualification_code_answers_no_data_03(http, key):
    assert get(http, "/qualExamSchd/getQualExamSchdList", serviceKey=key, jmCd="0000").json() == NO_DATA


def test_schedule_is_xml_by_default(http, key):
    r = http.get(f"{BASE}/qualExamSchd/getQualExamSchdList", params={"serviceKey": key, "implYy": "2025",
                                                                      "numOfRows": 2})
    root = ET.fromstring(r.content)
    assert root.tag == "response" and root.findtext("header/resultCode") == "00"
    assert len(root.findall("body/items/item")) == 2 and root.findtext("body/numOfRows") == "2"


def test_acquisitions_add_up_to_the_year_s_practical_passers(http, key, world):
    jm = qual(world, "한식조리기능사")["jmCd"]
    first = get(http, "/qualAcquPtcond/getQualAcquPtcond", serviceKey=key, acquYy="2024", qualgbCd="T", jmCd=jm,
                numOfRows=1000).json()
    items = first["body"]["items"]
    assert first["body"]["totalCount"] == len(items)
    assert sum(int(i["acquCnt"]) for i in items) == world.scalar(
        "SELECT silPassCnt FROM hrdk_pass_rate WHERE jmCd = ? AND statisYy = '2024'", [jm])
    assert {i["genderNm"] for i in items} <= {"남성", "여성"}


def test_acquisitions_require_year_and_qualification_kind(http, key):
    assert get(http, "/qualAcquPtcond/getQualAcquPtcond", serviceKey=key, acquYy="2024").json() == {
        "header": {"resultCode": "11", "resultMsg": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR."}}


def test_acquisitions_filter_by_region_age_and_gender(http, key, world):
    body = get(http, "/qualAcquPtcond/getQualAcquPtcond", serviceKey=key, acquYy="2023", qualgbCd="T",
               jmCd="1320", rgnCd="001", ageGrupCd="2", genderCd="F").json()
    assert {(i["rgnNm"], i["ageGrupNm"], i["genderNm"]) for i in body["body"]["items"]} == {("서울특별시", "20대", "여성")}


def test_open_question_list_caps_rows_at_50_with_code_930(http, key):
    assert get(http, "/openQst/getOpenQstList", serviceKey=key, numOfRows=51).json()["header"]["resultCode"] == "930"
    assert get(http, "/openQst/getOpenQstList", serviceKey=key, numOfRows=50).json()["header"]["resultCode"] == "00"


def test_open_question_list_to_detail_with_file_list(http, key, world):
    post = world.rows("SELECT * FROM hrdk_open_qst ORDER BY artlSeq LIMIT 1")[0]
    listed = get(http, "/openQst/getOpenQstList", serviceKey=key, qualgbCd="T", jmNm=post["jmNm"],
                 numOfRows=50).json()
    assert str(post["artlSeq"]) in [i["artlSeq"] for i in listed["body"]["items"]]
    detail = get(http, "/openQst/getOpenQst", serviceKey=key, artlSeq=post["artlSeq"]).json()
    files = world.rows("SELECT fileNm, fileUrl FROM hrdk_open_qst_file WHERE artlSeq = ? ORDER BY fileSeq",
                       [post["artlSeq"]])
    assert detail["header"]["resultCode"] == "00"
    assert (detail["body"]["title"], detail["body"]["fileList"]) == (post["title"], files)


def test_open_question_detail_of_unknown_or_missing_article(http, key):
    assert get(http, "/openQst/getOpenQst", serviceKey=key, artlSeq="abc").json() == NO_DATA
    assert get(http, "/openQst/getOpenQst", serviceKey=key).json()["header"]["resultCode"] == "11"


def test_pass_rate_non_integer_paging_is_a_parameter_error(http, key):
    body = get(http, "/qualPassRate/getQualPassRateList", serviceKey=key, pageNo="x").json()
    assert body["header"]["resultCode"] == "10"


@pytest.mark.parametrize("path", ["/qualExamSchd/getQualExamSchdList", "/openQst/getOpenQst",
                                  "/qualPassRate/getQualPassRateList"])
def test_wrong_key_is_rejected_by_the_gateway_as_xml_even_for_json(http, path):
    r = get(http, path, serviceKey="not-a-key", artlSeq="1")
    root = ET.fromstring(r.content)
    assert r.status_code == 200 and root.tag == "OpenAPI_ServiceResponse"
    assert root.findtext("cmmMsgHeader/returnReasonCode") == "30"


@pytest.mark.parametrize(("kind", "code"), [(FaultKind.RATE_LIMIT, "22"), (FaultKind.SERVER_ERROR, "01"),
                                            (FaultKind.UNAVAILABLE, "04")])
def test_faults_are_gateway_rejections(kind, code):
    request = Request({"type": "http", "method": "GET", "path": f"{BASE}/openQst/getOpenQstList",
                       "query_string": b"dataFormat=json", "headers": []})
    root = ET.fromstring(hrdk.fault_response(kind, request).body)
    assert root.findtext("cmmMsgHeader/returnReasonCode") == code
