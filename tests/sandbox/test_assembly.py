"""열린국회정보 (assembly) over real HTTP: envelopes, paging, errors, faults and the domain chains."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from sandbox.faults import FaultKind
from sandbox.platforms import assembly
from sandbox.platforms.base import PlatformContext

BASE = "/assembly/portal/openapi"
MEMBER_FIELDS = ["HG_NM", "HJ_NM", "ENG_NM", "BTH_GBN_NM", "BTH_DATE", "JOB_RES_NM", "POLY_NM", "ORIG_NM",
                 "ELECT_GBN_NM", "CMIT_NM", "CMITS", "REELE_GBN_NM", "UNITS", "SEX_GBN_NM", "TEL_NO", "E_MAIL",
                 "HOMEPAGE", "STAFF", "SECRETARY", "SECRETARY2", "MONA_CD", "MEM_TITLE", "ASSEM_ADDR"]
NO_DATA = {"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}}


@pytest.fixture
def call(http, keys):
    """GET an endpoint with the sandbox key and Type=json; returns the decoded body."""
    def get(endpoint: str, **params):
        params = {"KEY": keys.first("assembly"), "Type": "json", **params}
        response = http.get(f"{BASE}/{endpoint}", params=params)
        assert response.status_code == 200
        return response.json()
    return get


def rows_of(body: dict, endpoint: str) -> list[dict]:
    row = body[endpoint][1]["row"]
    return [row] if isinstance(row, dict) else row


def total_of(body: dict, endpoint: str) -> int:
    return body[endpoint][0]["head"][0]["list_total_count"]


def error(code: str) -> dict:
    from sandbox.platforms.hub import MESSAGES

    return {"RESULT": {"CODE": code, "MESSAGE": MESSAGES[code]}}


def test_current_members_envelope_lists_every_sitting_member_with_the_portal_fields(call, world):
    body = call("nwvrqwxyaytdsfvhu", pSize=5)
    head = body["nwvrqwxyaytdsfvhu"][0]["head"]
    assert head == [{"list_total_count": world.count("assembly_member")},
                    {"RESULT": {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다."}}]
    rows = rows_of(body, "nwvrqwxyaytdsfvhu")
    assert len(rows) == 5
    assert all(list(r) == MEMBER_FIELDS for r in rows)
    assert all(isinstance(v, str) or v is None for r in rows for v in r.values())
    assert world.count("assembly_member") >= 295


def test_a_single_matching_row_comes_back_as_an_object_not_a_list(call, world):
    member = world.rows("SELECT * FROM assembly_member ORDER BY MONA_CD LIMIT 1")[0]
    row = call("nwvrqwxyaytdsfvhu", MONA_CD=member["MONA_CD"])["nwvrqwxyaytdsfvhu"][1]["row"]
    assert row == {k: member[k] for k in MEMBER_FIELDS}


def test_xml_is_the_default_format(http, keys, world):
    response = http.get(f"{BASE}/nwvrqwxyaytdsfvhu", params={"KEY": keys.first("assembly"), "pSize": 3})
    assert response.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(response.content)
    assert root.tag == "nwvrqwxyaytdsfvhu"
    assert root.findtext("head/list_total_count") == str(world.count("assembly_member"))
    assert root.findtext("head/RESULT/CODE") == "INFO-000"
    assert len(root.findall("row")) == 3


def test_pages_follow_pindex_and_psize_without_overlap(call):
    first = rows_of(call("ALLNAMEMBER", pIndex=1, pSize=7), "ALLNAMEMBER")
    second = rows_of(call("ALLNAMEMBER", pIndex=2, pSize=7), "ALLNAMEMBER")
    both = rows_of(call("ALLNAMEMBER", pIndex=1, pSize=14), "ALLNAMEMBER")
    assert first + second == both


def test_more_than_1000_rows_per_call_is_error_336(call):
    assert call("ALLNAMEMBER", pSize=1001) == error("ERROR-336")


def test_paging_past_the_end_and_unmatched_filters_give_the_top_level_no_data_answer(call, world):
    assert call("nwvrqwxyaytdsfvhu", HG_NM="없는사람") == NO_DATA
    assert call("nwvrqwxyaytdsfvhu", pIndex=world.count("assembly_member") + 1, pSize=1) == NO_DATA


def test_a_wrong_key_is_error_290_in_the_format_asked_for(http):
    assert http.get(f"{BASE}/nwvrqwxyaytdsfvhu", params={"KEY": "0" * 32, "Type": "json"}).json() == \
        error("ERROR-290")
    root = ET.fromstring(http.get(f"{BASE}/nwvrqwxyaytdsfvhu", params={"KEY": "0" * 32}).content)
    assert (root.tag, root.findtext("CODE")) == ("RESULT", "ERROR-290")


def test_keyless_calls_get_a_five_row_sample(http, world):
    body = http.get(f"{BASE}/nwvrqwxyaytdsfvhu", params={"Type": "json", "pSize": 100}).json()
    assert total_of(body, "nwvrqwxyaytdsfvhu") == world.count("assembly_member")
    assert len(rows_of(body, "nwvrqwxyaytdsfvhu")) == 5


def test_unknown_endpoint_is_error_310(call):
    assert call("OWSSC6001134T516707") == error("ERROR-310")


@pytest.mark.parametrize("params, code", [({"pIndex": "x"}, "ERROR-333"), ({"pSize": "0"}, "ERROR-333"),
                                          ({"Type": "csv"}, "ERROR-301")])
def test_bad_paging_or_format_values_get_the_portal_error_not_a_server_error(call, params, code):
    assert call("nwvrqwxyaytdsfvhu", **params) == error(code)


@pytest.mark.parametrize("endpoint, params", [
    ("nzmimeepazxkubdpn", {}), ("ncocpgfiaoituanbr", {}), ("nojepdqqaweusdfbi", {"AGE": "22"}),
    ("nzbyfwhwaoanttzje", {"DAE_NUM": "22"}), ("ncwgseseafwbuheph", {"CONF_DATE": "2025"}), ("ALLBILL", {})])
def test_missing_required_inputs_are_error_300(call, endpoint, params):
    assert call(endpoint, **params) == error("ERROR-300")


def test_odd_filter_values_answer_no_data(call):
    assert call("nzmimeepazxkubdpn", AGE="스물둘") == NO_DATA
    assert call("nzmimeepazxkubdpn", AGE="22", BILL_NO="'; DROP TABLE x; --") == NO_DATA


def test_current_members_ignore_unit_cd_and_match_cmits_as_a_substring(call, world):
    plain = call("nwvrqwxyaytdsfvhu", pSize=3)
    assert call("nwvrqwxyaytdsfvhu", pSize=3, UNIT_CD="100021") == plain
    expected = world.count("assembly_member", "CMITS LIKE ?", ["%예산결산특별위원회%"])
    body = call("nwvrqwxyaytdsfvhu", CMITS="예산결산", pSize=1000)
    assert total_of(body, "nwvrqwxyaytdsfvhu") == expected > 0
    assert all("예산결산특별위원회" in r["CMITS"] for r in rows_of(body, "nwvrqwxyaytdsfvhu"))


def test_reelection_count_matches_the_terms_listed_in_units(call):
    for r in rows_of(call("nwvrqwxyaytdsfvhu", pSize=1000), "nwvrqwxyaytdsfvhu"):
        n = len(r["UNITS"].split(", "))
        assert r["REELE_GBN_NM"] == ({1: "초선", 2: "재선"}.get(n) or f"{n}선")
        assert r["UNITS"].endswith("제22대")


def test_member_history_joins_per_term_values_with_slashes_in_term_order(call, world):
    person = world.rows("SELECT * FROM assembly_member_history WHERE GTELT_ERACO LIKE '%,%' "
                        "ORDER BY NAAS_CD LIMIT 1")[0]
    row = rows_of(call("ALLNAMEMBER", NAAS_CD=person["NAAS_CD"]), "ALLNAMEMBER")[0]
    terms = row["GTELT_ERACO"].split(", ")
    assert terms == sorted(terms, key=lambda t: int(t[1:-1]))
    assert len(row["PLPT_NM"].split("/")) == len(terms) == len(row["ELECD_NM"].split("/"))


def test_chain_lawmaker_name_to_code_to_bills_led_to_plenary_votes(call, world):
    pick = world.rows(
        "SELECT b.RST_PROPOSER, b.RST_MONA_CD, b.BILL_ID FROM assembly_bill b "
        "JOIN assembly_vote v USING (BILL_ID) JOIN assembly_member m ON m.MONA_CD = b.RST_MONA_CD "
        "WHERE b.PROPOSER_KIND = '의원' ORDER BY b.BILL_NO LIMIT 1")[0]
    members = rows_of(call("nwvrqwxyaytdsfvhu", HG_NM=pick["RST_PROPOSER"]), "nwvrqwxyaytdsfvhu")
    mona = next(m["MONA_CD"] for m in members if m["MONA_CD"] == pick["RST_MONA_CD"])
    bills = rows_of(call("nzmimeepazxkubdpn", AGE="22", PROPOSER=pick["RST_PROPOSER"], pSize=1000),
                    "nzmimeepazxkubdpn")
    led = [b for b in bills if b["RST_MONA_CD"] == mona]
    assert pick["BILL_ID"] in {b["BILL_ID"] for b in led}
    assert all(b["PROPOSER"].startswith(pick["RST_PROPOSER"] + "의원 등 ") for b in led)
    total = rows_of(call("ncocpgfiaoituanbr", AGE="22", BILL_ID=pick["BILL_ID"]), "ncocpgfiaoituanbr")[0]
    votes = rows_of(call("nojepdqqaweusdfbi", AGE="22", BILL_ID=pick["BILL_ID"], pSize=1000), "nojepdqqaweusdfbi")
    assert len(votes) == int(total["MEMBER_TCNT"])
    for mode, field in (("찬성", "YES_TCNT"), ("반대", "NO_TCNT"), ("기권", "BLANK_TCNT")):
        assert sum(v["RESULT_VOTE_MOD"] == mode for v in votes) == int(total[field])
    assert int(total["VOTE_TCNT"]) == sum(v["RESULT_VOTE_MOD"] != "불참" for v in votes)
    mine = rows_of(call("nojepdqqaweusdfbi", AGE="22", BILL_ID=pick["BILL_ID"], MONA_CD=mona), "nojepdqqaweusdfbi")
    assert [v["HG_NM"] for v in mine] == [pick["RST_PROPOSER"]]


def test_chain_committee_name_to_roster_to_its_members_bills(call, world):
    pick = world.rows(
        "SELECT c.COMMITTEE_NAME, r.HG_NM, r.MONA_CD FROM assembly_committee c "
        "JOIN assembly_committee_member r ON r.DEPT_CD = c.HR_DEPT_CD "
        "JOIN assembly_bill b ON b.RST_MONA_CD = r.MONA_CD AND b.COMMITTEE = c.COMMITTEE_NAME AND b.AGE = '22' "
        "ORDER BY c.HR_DEPT_CD, r.MONA_CD LIMIT 1")[0]
    committee = rows_of(call("nxrvzonlafugpqjuh", COMMITTEE_NAME=pick["COMMITTEE_NAME"]), "nxrvzonlafugpqjuh")[0]
    roster = rows_of(call("nktulghcadyhmiqxi", DEPT_CD=committee["HR_DEPT_CD"], pSize=100), "nktulghcadyhmiqxi")
    assert int(committee["CURR_CNT"]) == len(roster)
    assert committee["HG_NM"] == next(f"{r['HG_NM']} ({r['POLY_NM']})" for r in roster if r["JOB_RES_NM"] == "위원장")
    member = next(r for r in roster if r["MONA_CD"] == pick["MONA_CD"])
    bills = rows_of(call("nzmimeepazxkubdpn", AGE="22", PROPOSER=member["HG_NM"],
                         COMMITTEE=committee["COMMITTEE_NAME"], pSize=1000), "nzmimeepazxkubdpn")
    assert any(b["RST_MONA_CD"] == member["MONA_CD"] for b in bills)
    assert {b["COMMITTEE_ID"] for b in bills} == {committee["HR_DEPT_CD"]}


def test_chain_term_and_district_to_member(call, world):
    sitting = world.rows("SELECT ORIG_NM, MONA_CD FROM assembly_member WHERE ELECT_GBN_NM = '지역구' "
                         "ORDER BY MONA_CD LIMIT 1")[0]
    found = rows_of(call("nwvrqwxyaytdsfvhu", ORIG_NM=sitting["ORIG_NM"]), "nwvrqwxyaytdsfvhu")
    assert [m["MONA_CD"] for m in found] == [sitting["MONA_CD"]]
    district = "서울 종로구"  # a real district that exists in every term
    rows = rows_of(call("ALLNAMEMBER", GTELT_ERACO="제20대", ELECD_NM=district, pSize=100), "ALLNAMEMBER")
    holders = []
    for r in rows:
        terms = r["GTELT_ERACO"].split(", ")
        if "제20대" in terms and r["ELECD_NM"].split("/")[terms.index("제20대")] == district:
            holders.append(r["NAAS_CD"])
    assert holders


def test_bill_search_covers_committee_and_government_bills_and_allbill_gives_detail(call, world):
    bill = world.rows("SELECT * FROM assembly_bill WHERE PROPOSER_KIND = '정부' ORDER BY BILL_NO LIMIT 1")[0]
    found = rows_of(call("TVBPMBILL11", BILL_NO=bill["BILL_NO"]), "TVBPMBILL11")[0]
    assert (found["PROPOSER"], found["CURR_COMMITTEE"], found["PROC_RESULT_CD"]) == \
        ("정부", bill["COMMITTEE"], bill["PROC_RESULT"])
    assert call("nzmimeepazxkubdpn", AGE=bill["AGE"], BILL_NO=bill["BILL_NO"]) == NO_DATA
    detail = rows_of(call("ALLBILL", BILL_NO=bill["BILL_NO"]), "ALLBILL")[0]
    assert (detail["BILL_NM"], detail["PPSR_KND"], detail["ERACO"]) == \
        (bill["BILL_NAME"], "정부", f"제{bill['AGE']}대")


def test_member_bill_numbers_and_proposers_belong_to_the_term(call, world):
    rows = rows_of(call("nzmimeepazxkubdpn", AGE="21", pSize=50), "nzmimeepazxkubdpn")
    assert all(r["BILL_NO"].startswith("21") and len(r["BILL_NO"]) == 7 for r in rows)
    assert all(r["BILL_ID"].startswith("PRC_") and len(r["BILL_ID"]) == 34 for r in rows)
    codes = {c for r in rows for c in [r["RST_MONA_CD"], *r["PUBL_MONA_CD"].split(",")]}
    history = {r["NAAS_CD"]: r["GTELT_ERACO"] for r in world.rows(
        "SELECT NAAS_CD, GTELT_ERACO FROM assembly_member_history")}
    assert all("제21대" in history[c] for c in codes)
    assert all(int(r["PROPOSER"].rsplit(" ", 1)[1][:-1]) == 1 + len(r["PUBL_PROPOSER"].split(",")) for r in rows)


def test_minutes_need_term_and_date_and_match_the_date_as_a_substring(call, world):
    year = world.scalar("SELECT min(CONF_DATE) FROM assembly_minutes_committee WHERE DAE_NUM = '21'")[:4]
    expected = world.count("assembly_minutes_committee", "DAE_NUM = '21' AND CONF_DATE LIKE ?", [f"%{year}%"])
    body = call("ncwgseseafwbuheph", DAE_NUM="21", CONF_DATE=year, pSize=1000)
    assert total_of(body, "ncwgseseafwbuheph") == expected
    rows = rows_of(body, "ncwgseseafwbuheph")
    assert all(r["CONF_DATE"].startswith(year) and r["DAE_NUM"] == "21" for r in rows)
    assert [r["CONF_DATE"] for r in rows] == sorted((r["CONF_DATE"] for r in rows), reverse=True)
    plenary = rows_of(call("nzbyfwhwaoanttzje", DAE_NUM="21", CONF_DATE=year, pSize=5), "nzbyfwhwaoanttzje")
    assert all(r["CLASS_NAME"] == "본회의" and r["TITLE"].endswith("본회의") for r in plenary)


def test_plenary_minutes_list_the_bills_decided_that_day(call, world):
    vote = world.rows("SELECT BILL_NO, PROC_DT FROM assembly_vote ORDER BY BILL_NO LIMIT 1")[0]
    rows = rows_of(call("nzbyfwhwaoanttzje", DAE_NUM="22", CONF_DATE=vote["PROC_DT"], pSize=1000),
                   "nzbyfwhwaoanttzje")
    assert any(f"(의안번호 {vote['BILL_NO']})" in r["SUB_NAME"] for r in rows)


def _request(query: str = "") -> Request:
    return Request({"type": "http", "method": "GET", "path": f"{BASE}/nwvrqwxyaytdsfvhu", "headers": [],
                    "query_string": query.encode()})


@pytest.mark.parametrize("kind, code", [(FaultKind.RATE_LIMIT, "ERROR-337"), (FaultKind.SERVER_ERROR, "ERROR-500")])
def test_quota_and_server_faults_are_hub_result_codes_with_http_200(kind, code):
    import json

    response = assembly.fault_response(kind, _request("Type=json"))
    assert response.status_code == 200
    assert json.loads(response.body) == error(code)
    xml = assembly.fault_response(kind, _request())
    assert ET.fromstring(xml.body).findtext("CODE") == code


def test_an_outage_is_an_html_503():
    response = assembly.fault_response(FaultKind.UNAVAILABLE, _request("Type=json"))
    assert response.status_code == 503
    assert response.media_type == "text/html"


def test_a_removed_service_answers_error_310(world, keys):
    pctx = PlatformContext(spec=assembly.SPEC, world=world, keys=keys, removed_services=frozenset({"ALLNAMEMBER"}))
    with TestClient(assembly.create_app(pctx)) as client:
        body = client.get("/ALLNAMEMBER", params={"KEY": keys.first("assembly"), "Type": "json"}).json()
        assert body == error("ERROR-310")
        assert "nwvrqwxyaytdsfvhu" in client.get("/nwvrqwxyaytdsfvhu", params={"Type": "json"}).json()
