"""국가법령정보센터 DRF emulation: lawSearch.do / lawService.do over real HTTP on loopback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.testclient import TestClient

from sandbox import create_sandbox_app
from sandbox.faults import FaultKind, FaultProfile, FaultRates
from sandbox.platforms import law as law_platform

SEARCH = "/law/DRF/lawSearch.do"
SERVICE = "/law/DRF/lawService.do"
VERIFY_MSG = "OPEN API 호출 시 사용자 검증을 위하여 정확한 서버장비의 IP주소 및 도메인주소를 등록해 주세요."


@pytest.fixture(scope="module")
def oc(keys) -> str:
    return keys.first("law")


def search(http, oc, **params):
    return http.get(SEARCH, params={"OC": oc, "type": "JSON", **params})


def rows_of(body: dict, item: str) -> list[dict]:
    value = body.get(item, [])
    return value if isinstance(value, list) else [value]


def test_law_search_json_lists_the_current_version_with_string_values(http, oc, world):
    current = world.rows("SELECT * FROM law_law WHERE \"법령명한글\" = '민법' AND \"현행연혁코드\" = '현행'")[0]
    body = search(http, oc, target="law", query="민법").json()["LawSearch"]
    assert body["target"] == "law" and body["키워드"] == "민법" and body["section"] == "lawNm"
    assert body["resultCode"] == "00" and body["resultMsg"] == "success" and body["page"] == "1"
    minbeop = [r for r in rows_of(body, "law") if r["법령명한글"] == "민법"]
    assert minbeop == [{
        "id": minbeop[0]["id"], "법령일련번호": str(current["법령일련번호"]), "현행연혁코드": "현행", "법령명한글": "민법",
        "법령약칭명": "", "법령ID": current["법령ID"], "공포일자": current["공포일자"], "공포번호": str(current["공포번호"]),
        "제개정구분명": current["제개정구분명"], "소관부처코드": "1270000", "소관부처명": "법무부", "법령구분명": "법률",
        "공동부령정보": "", "시행일자": current["시행일자"], "자법타법여부": "",
        "법령상세링크": f"/DRF/lawService.do?OC={oc}&target=law&MST={current['법령일련번호']}&type=HTML"}]


def test_one_hit_is_an_object_not_a_list(http, oc):
    body = search(http, oc, target="law", query="형사소송법 시행규칙").json()["LawSearch"]
    assert body["totalCnt"] == "1" and isinstance(body["law"], dict) and body["law"]["id"] == "1"


def test_name_search_ignores_spaces(http, oc):
    names = {r["법령명한글"] for r in rows_of(search(http, oc, target="law", query="개인정보보호법").json()["LawSearch"],
                                                "law")}
    assert "개인정보 보호법" in names


def test_search_defaults_to_xml_with_id_attributes_and_cdata_names(http, oc):
    response = http.get(SEARCH, params={"OC": oc, "target": "law", "query": "근로기준법"})
    assert response.headers["content-type"].startswith("text/xml")
    assert "<법령명한글><![CDATA[근로기준법]]></법령명한글>" in response.text
    root = ET.fromstring(response.content)
    assert root.tag == "LawSearch" and root.findtext("totalCnt") == str(len(root.findall("law")))
    assert [el.get("id") for el in root.findall("law")] == [str(i) for i in range(1, len(root.findall("law")) + 1)]


def test_paging_ids_continue_across_pages_and_display_is_clamped_to_100(http, oc, world):
    total = world.count("law_law", "\"현행연혁코드\" = '현행'")
    first = search(http, oc, target="law", display="500").json()["LawSearch"]
    assert first["totalCnt"] == str(total) and first["numOfRows"] == str(min(total, 100))
    page2 = search(http, oc, target="law", display="7", page="2").json()["LawSearch"]
    assert [r["id"] for r in page2["law"]] == [str(i) for i in range(8, 15)]
    names = [r["법령명한글"] for r in search(http, oc, target="law", display="30").json()["LawSearch"]["law"]]
    assert names == sorted(names)  # default sort lasc: 법령명 ascending


def test_unparseable_paging_values_fall_back_to_defaults(http, oc):
    body = search(http, oc, target="law", display="many", page="-3").json()["LawSearch"]
    assert body["page"] == "1" and body["numOfRows"] == "20"


def test_no_hits_keep_the_envelope_but_drop_the_row_key(http, oc):
    body = search(http, oc, target="law", query="존재하지않는법령이름").json()
    assert body == {"LawSearch": {"target": "law", "키워드": "존재하지않는법령이름", "section": "lawNm", "totalCnt": "0",
                                  "page": "1", "numOfRows": "0", "resultCode": "00", "resultMsg": "success"}}


@pytest.mark.parametrize("path", [SEARCH, SERVICE])
def test_unknown_oc_gets_the_user_verification_failure(http, path):
    response = http.get(path, params={"OC": "nobody", "target": "law", "type": "JSON", "query": "민법"})
    assert response.status_code == 200
    assert response.json() == {"result": "사용자 정보 검증에 실패하였습니다.", "msg": VERIFY_MSG}
    xml = ET.fromstring(http.get(path, params={"OC": "nobody", "target": "law"}).content)
    assert (xml.tag, xml.findtext("result"), xml.findtext("msg")) == ("Response", "사용자 정보 검증에 실패하였습니다.",
                                                                      VERIFY_MSG)


def test_missing_oc_fails_the_required_field_check(http):
    response = http.get(SEARCH, params={"target": "law", "type": "JSON"})
    assert response.json() == {"result": "필수입력요소 검증에 실패하였습니다.", "msg": VERIFY_MSG}


@pytest.mark.parametrize("path", [SEARCH, SERVICE])
def test_unrouted_target_is_http_404(http, oc, path):
    assert http.get(path, params={"OC": oc, "target": "nosuchtarget", "type": "JSON"}).status_code == 404


def test_law_name_to_id_to_article_text_chain(http, oc, world):
    article = world.rows("SELECT a.\"조문내용\", a.\"_항\", l.\"법령ID\" FROM law_article a JOIN law_law l USING (\"법령일련번호\") "
                         "WHERE l.\"법령명한글\" = '근로기준법' AND l.\"현행연혁코드\" = '현행' AND a.\"조문번호\" = 23 "
                         "AND a.\"조문여부\" = '조문'")[0]
    hit = [r for r in rows_of(search(http, oc, target="law", query="근로기준법").json()["LawSearch"], "law")
           if r["법령명한글"] == "근로기준법"][0]
    assert hit["법령ID"] == article["법령ID"]
    body = http.get(SERVICE, params={"OC": oc, "target": "law", "ID": hit["법령ID"], "JO": "002300",
                                     "type": "JSON"}).json()["법령"]
    assert body["기본정보"]["법령명_한글"] == "근로기준법"
    assert body["기본정보"]["법령ID"] == hit["법령ID"] and body["기본정보"]["공포일자"] == hit["공포일자"]
    assert body["기본정보"]["소관부처"] == {"소관부처코드": "1492000", "content": "고용노동부"}
    unit = body["조문"]["조문단위"]  # one article → an object
    assert unit["조문키"] == "0023001" and unit["조문제목"] == "해고 등의 제한"
    assert unit["조문내용"] == article["조문내용"] == "제23조(해고 등의 제한)"
    assert "정당한 이유 없이 해고" in str(unit["항"])
    assert isinstance(body["부칙"]["부칙단위"], (list, dict))


def test_mst_pins_a_historic_version(http, oc, world):
    old = world.rows("SELECT * FROM law_law WHERE \"현행연혁코드\" = '연혁' ORDER BY \"법령일련번호\" LIMIT 1")[0]
    articles = world.count("law_article", "\"법령일련번호\" = ?", [old["법령일련번호"]])
    body = http.get(SERVICE, params={"OC": oc, "target": "law", "MST": old["법령일련번호"], "type": "JSON"}).json()["법령"]
    assert body["기본정보"]["공포일자"] == old["공포일자"] and body["기본정보"]["시행일자"] == old["시행일자"]
    units = body["조문"]["조문단위"]
    assert len(units if isinstance(units, list) else [units]) == articles
    hist = search(http, oc, target="eflaw", LID=old["법령ID"], nw="1").json()["LawSearch"]
    assert str(old["법령일련번호"]) in {r["법령일련번호"] for r in rows_of(hist, "law")}
    assert {r["현행연혁코드"] for r in rows_of(hist, "law")} == {"연혁"}
    assert "&mobileYn=&efYd=" in rows_of(hist, "law")[0]["법령상세링크"]


def test_law_body_xml_carries_attributes(http, oc):
    response = http.get(SERVICE, params={"OC": oc, "target": "law", "LM": "민법", "JO": "075000"})
    root = ET.fromstring(response.content)
    assert root.tag == "법령" and root.get("법령키")
    assert root.find("기본정보/법종구분").get("법종구분코드") == "A0002"
    assert root.find("조문/조문단위").get("조문키") == "0750001"
    assert root.findtext("조문/조문단위/조문내용").startswith("제750조(불법행위의 내용) 고의 또는 과실로")


@pytest.mark.parametrize("target, params, sentence", [
    ("law", {"MST": "1"}, "일치하는 법령이 없습니다. 법령명을 확인하여 주십시오."),
    ("law", {"ID": "abc"}, "일치하는 법령이 없습니다. 법령명을 확인하여 주십시오."),
    ("prec", {"ID": "1"}, "일치하는 판례가 없습니다.  판례명을 확인하여 주십시오."),
    ("detc", {}, "일치하는 헌재결정례가 없습니다.  헌재결정례명을 확인하여 주십시오."),
])
def test_body_lookup_without_match_answers_a_law_sentence(http, oc, target, params, sentence):
    response = http.get(SERVICE, params={"OC": oc, "target": target, "type": "JSON", **params})
    assert response.status_code == 200 and response.json() == {"Law": sentence}
    xml = ET.fromstring(http.get(SERVICE, params={"OC": oc, "target": target, **params}).content)
    assert (xml.tag, xml.text) == ("Law", sentence)


def test_law_to_citing_precedents_to_precedent_body_chain(http, oc, world):
    cited = world.rows("SELECT \"판례일련번호\" FROM law_prec_ref WHERE \"법령명\" = '민법'")
    expected = {r["판례일련번호"] for r in cited}
    listing = search(http, oc, target="prec", JO="민법", display="100").json()["PrecSearch"]
    assert listing["totalCnt"] == str(len(expected))
    first = rows_of(listing, "prec")[0]
    assert int(first["판례일련번호"]) in expected
    assert first["판례상세링크"] == f"/DRF/lawService.do?OC={oc}&target=prec&ID={first['판례일련번호']}&type=HTML&mobileYn="
    body_search = search(http, oc, target="prec", search="2", query="민법 제", display="100").json()["PrecSearch"]
    assert body_search["section"] == "bdyText" and int(body_search["totalCnt"]) >= len(expected)
    detail = http.get(SERVICE, params={"OC": oc, "target": "prec", "ID": first["판례일련번호"], "type": "JSON"}).json()
    prec = detail["PrecService"]
    assert prec["판례정보일련번호"] == first["판례일련번호"] and "민법 제" in prec["참조조문"]
    assert prec["선고일자"] == first["선고일자"].replace(".", "")  # list YYYY.MM.DD, body YYYYMMDD
    assert set(prec) >= {"판시사항", "판결요지", "참조판례", "판례내용", "법원종류코드", "사건종류코드"}
    ref = world.rows("SELECT * FROM law_prec_ref WHERE \"판례일련번호\" = ? AND \"법령명\" = '민법'",
                     [int(first["판례일련번호"])])[0]
    jo = f"{ref['조문번호']:04d}{ref['조문가지번호']:02d}"
    article = http.get(SERVICE, params={"OC": oc, "target": "law", "LM": "민법", "JO": jo, "type": "JSON"}).json()
    assert article["법령"]["조문"]["조문단위"]["조문번호"] == str(ref["조문번호"])


def test_precedent_filters_and_default_date_descending_order(http, oc, world):
    body = search(http, oc, target="prec", org="400201", display="50").json()["PrecSearch"]
    rows = rows_of(body, "prec")
    assert body["totalCnt"] == str(world.count("law_prec", "\"법원종류코드\" = 400201"))
    assert {r["법원명"] for r in rows} == {"대법원"}
    dates = [r["선고일자"] for r in rows]
    assert dates == sorted(dates, reverse=True)
    ranged = search(http, oc, target="prec", prncYd="20200101~20201231", display="100").json()["PrecSearch"]
    assert ranged["totalCnt"] == str(world.count("law_prec", "\"선고일자\" BETWEEN '20200101' AND '20201231'"))
    assert all(r["선고일자"].startswith("2020.") for r in rows_of(ranged, "prec"))


def test_constitutional_decisions_use_the_capital_d_row_key(http, oc, world):
    decision = world.rows("SELECT * FROM law_detc ORDER BY \"헌재결정례일련번호\" LIMIT 1")[0]
    body = search(http, oc, target="detc", nb=decision["사건번호"]).json()["DetcSearch"]
    assert "detc" not in body and rows_of(body, "Detc")[0]["헌재결정례일련번호"] == str(decision["헌재결정례일련번호"])
    detail = http.get(SERVICE, params={"OC": oc, "target": "detc", "ID": decision["헌재결정례일련번호"],
                                       "type": "JSON"}).json()["DetcService"]
    assert detail["사건명"] == decision["사건명"] and detail["심판대상조문"] == decision["심판대상조문"]


def test_html_type_answers_an_html_page(http, oc):
    response = http.get(SEARCH, params={"OC": oc, "target": "law", "type": "HTML", "query": "민법"})
    assert response.headers["content-type"].startswith("text/html") and "민법" in response.text


def _request() -> Request:
    return Request({"type": "http", "method": "GET", "path": SEARCH, "query_string": b"", "headers": Headers().raw})


def test_fault_kinds_render_as_the_law_service_does():
    limited = law_platform.fault_response(FaultKind.RATE_LIMIT, _request())
    broken = law_platform.fault_response(FaultKind.SERVER_ERROR, _request())
    gone = law_platform.fault_response(FaultKind.UNAVAILABLE, _request())
    assert limited.status_code == 429 and broken.status_code == 500 and b"500" in broken.body
    assert (gone.status_code, gone.body) == (200, b"")


def test_injected_rate_limit_reaches_the_client_as_429(world, keys, oc):
    app = create_sandbox_app(world, keys, FaultProfile(platforms={"law": FaultRates(rate_limit=1.0)}))
    with TestClient(app, base_url="http://sandbox") as client:
        assert client.get(SEARCH, params={"OC": oc, "target": "law"}).status_code == 429
