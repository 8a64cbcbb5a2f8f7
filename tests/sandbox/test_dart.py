"""OpenDART emulation: envelopes, paging, errors, the corpCode ZIP and the CB → price chain."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
import zipfile

import pytest
from starlette.requests import Request

from sandbox.faults import FaultKind
from sandbox.platforms import dart

BASE = "/dart/api"
LIST_FIELDS = ["corp_cls", "corp_name", "corp_code", "stock_code", "report_nm", "rcept_no", "flr_nm", "rcept_dt", "rm"]
CVBD_FIELDS = [
    "rcept_no", "corp_cls", "corp_code", "corp_name", "bd_tm", "bd_knd", "bd_fta", "atcsc_rmislmt", "ovis_fta",
    "ovis_fta_crn", "ovis_ster", "ovis_isar", "ovis_mktnm", "fdpp_fclt", "fdpp_bsninh", "fdpp_op", "fdpp_dtrp",
    "fdpp_ocsa", "fdpp_etc", "bd_intr_ex", "bd_intr_sf", "bd_mtd", "bdis_mthn", "cv_rt", "cv_prc", "cvisstk_knd",
    "cvisstk_cnt", "cvisstk_tisstk_vs", "cvrqpd_bgd", "cvrqpd_edd", "act_mktprcfl_cvprc_lwtrsprc",
    "act_mktprcfl_cvprc_lwtrsprc_bs", "rmislmt_lt70p", "abmg", "sbd", "pymd", "rpmcmp", "grint", "bddd",
    "od_a_at_t", "od_a_at_b", "adt_a_atn", "rs_sm_atn", "ex_sm_r", "ovis_ltdtl", "ftc_stt_atn"]
NO_DATA = {"status": "013", "message": "조회된 데이타가 없습니다."}
BAD_FIELD = {"status": "100", "message": dart.MESSAGES["100"]}


@pytest.fixture(scope="module")
def key(keys):
    return keys.first("dart")


def won(text: str) -> int:
    return int(text.replace(",", ""))


def test_list_pages_one_company_newest_first_with_numeric_paging_fields(http, world, key):
    corp = world.rows("SELECT corp_code, count(*) AS n FROM dart_disclosure GROUP BY corp_code "
                      "ORDER BY n DESC, corp_code LIMIT 1")[0]
    body = http.get(f"{BASE}/list.json", params={"crtfc_key": key, "corp_code": corp["corp_code"], "bgn_de": "20240101",
                                                 "end_de": "20261130", "page_count": 5, "page_no": 2}).json()
    assert {k: body[k] for k in ("status", "message", "page_no", "page_count", "total_count", "total_page")} == {
        "status": "000", "message": "정상", "page_no": 2, "page_count": 5, "total_count": corp["n"],
        "total_page": math.ceil(corp["n"] / 5)}
    assert [list(r) for r in body["list"]] == [LIST_FIELDS] * 5
    expected = world.rows(f"SELECT {', '.join(LIST_FIELDS)} FROM dart_disclosure WHERE corp_code = ? "
                          "ORDER BY rcept_no DESC LIMIT 5 OFFSET 5", [corp["corp_code"]])
    assert body["list"] == expected


def test_list_page_count_above_100_is_a_bad_field(http, key):
    r = http.get(f"{BASE}/list.json", params={"crtfc_key": key, "bgn_de": "20250101", "end_de": "20250110",
                                              "page_count": 101})
    assert r.status_code == 200 and r.json() == BAD_FIELD


@pytest.mark.parametrize(("bgn", "end", "status"), [
    ("20260206", "20260506", "000"), ("20260206", "20260507", "100"), ("20260228", "20260531", "100"),
    ("20260609", "20260909", "000")])
def test_list_without_corp_code_spans_at_most_three_calendar_months(http, key, bgn, end, status):
    body = http.get(f"{BASE}/list.json", params={"crtfc_key": key, "bgn_de": bgn, "end_de": end}).json()
    assert body["status"] == status
    if status == "100":
        assert body == {"status": "100", "message": "검색기간은 3개월만 가능합니다"}


def test_list_filters_by_type_and_market_class(http, world, key):
    params = {"crtfc_key": key, "bgn_de": "20250301", "end_de": "20250331", "pblntf_ty": "A", "corp_cls": "K",
              "page_count": 100}
    body = http.get(f"{BASE}/list.json", params=params).json()
    assert body["total_count"] == world.count("dart_disclosure", "rcept_dt BETWEEN ? AND ? AND _pblntf_ty = 'A' "
                                              "AND corp_cls = 'K'", ["20250301", "20250331"])
    assert all(r["corp_cls"] == "K" and "보고서" in r["report_nm"] for r in body["list"])


def test_list_last_report_only_hides_corrected_originals(http, world, key):
    original = world.rows("SELECT corp_code, rcept_no FROM dart_disclosure WHERE _last = 'N' ORDER BY rcept_no LIMIT 1")[0]
    params = {"crtfc_key": key, "corp_code": original["corp_code"], "bgn_de": "20240101", "end_de": "20261130",
              "page_count": 100}
    every = [r["rcept_no"] for r in http.get(f"{BASE}/list.json", params=params).json()["list"]]
    last = http.get(f"{BASE}/list.json", params={**params, "last_reprt_at": "Y"}).json()
    assert original["rcept_no"] in every
    assert original["rcept_no"] not in [r["rcept_no"] for r in last["list"]]
    assert any(r["report_nm"].startswith("[기재정정]") for r in last["list"])


def test_list_no_match_answers_013(http, key):
    assert http.get(f"{BASE}/list.json", params={"crtfc_key": key, "corp_code": "99999999"}).json() == NO_DATA


def test_list_xml_repeats_list_elements_under_result(http, world, key):
    corp_code = world.scalar("SELECT corp_code FROM dart_disclosure ORDER BY rcept_no LIMIT 1")
    r = http.get(f"{BASE}/list.xml", params={"crtfc_key": key, "corp_code": corp_code, "bgn_de": "20240101",
                                             "page_count": 3})
    root = ET.fromstring(r.content)
    assert root.tag == "result" and root.findtext("status") == "000" and root.findtext("page_count") == "3"
    assert [c.tag for c in root.find("list")] == LIST_FIELDS
    assert 1 <= len(root.findall("list")) <= 3


@pytest.mark.parametrize("path", ["list.json", "company.json", "cvbdIsDecsn.json", "fnlttSinglAcnt.json"])
@pytest.mark.parametrize("params", [{}, {"crtfc_key": "0" * 40}])
def test_unknown_or_missing_key_is_status_010(http, path, params):
    r = http.get(f"{BASE}/{path}", params={"corp_code": "00126380", **params})
    assert r.status_code == 200 and r.json() == {"status": "010", "message": "등록되지 않은 키입니다."}


def test_unknown_key_in_xml_is_an_xml_status(http):
    root = ET.fromstring(http.get(f"{BASE}/company.xml", params={"crtfc_key": "x"}).content)
    assert (root.findtext("status"), root.findtext("message")) == ("010", "등록되지 않은 키입니다.")


def test_unknown_endpoint_is_status_101(http, key):
    assert http.get(f"{BASE}/empStat.json", params={"crtfc_key": key}).json() == {
        "status": "101", "message": "잘못된 URL입니다."}


@pytest.mark.parametrize("params", [{"bgn_de": "2025-01-01"}, {"end_de": "20250231"}, {"corp_cls": "X"},
                                    {"page_no": "0"}, {"sort": "name"}, {"corp_code": "126380"}])
def test_list_bad_fields_answer_status_100(http, key, params):
    assert http.get(f"{BASE}/list.json", params={"crtfc_key": key, **params}).json() == BAD_FIELD


def test_company_puts_the_overview_beside_status(http, key):
    body = http.get(f"{BASE}/company.json", params={"crtfc_key": key, "corp_code": "00126380"}).json()
    assert list(body) == ["status", "message", *dart.COMPANY_FIELDS]
    assert {k: body[k] for k in ("status", "corp_name", "stock_name", "stock_code", "corp_cls", "jurir_no", "bizr_no",
                                 "induty_code", "est_dt", "acc_mt")} == {
        "status": "000", "corp_name": "삼성전자(주)", "stock_name": "삼성전자", "stock_code": "005930", "corp_cls": "Y",
        "jurir_no": "1301110006246", "bizr_no": "1248100998", "induty_code": "264", "est_dt": "19690113",
        "acc_mt": "12"}


def test_company_unknown_corp_is_013_and_missing_corp_is_100(http, key):
    assert http.get(f"{BASE}/company.json", params={"crtfc_key": key, "corp_code": "99999999"}).json() == NO_DATA
    assert http.get(f"{BASE}/company.json", params={"crtfc_key": key}).json() == BAD_FIELD


def test_cvbd_decisions_carry_every_field_as_printed_strings(http, world, key):
    cb = world.rows("SELECT corp_code, rcept_no, _rcept_dt FROM dart_cvbd ORDER BY rcept_no LIMIT 1")[0]
    body = http.get(f"{BASE}/cvbdIsDecsn.json", params={"crtfc_key": key, "corp_code": cb["corp_code"],
                                                        "bgn_de": cb["_rcept_dt"], "end_de": cb["_rcept_dt"]}).json()
    assert body["status"] == "000"
    row = next(r for r in body["list"] if r["rcept_no"] == cb["rcept_no"])
    assert list(row) == CVBD_FIELDS and all(isinstance(v, str) for v in row.values())
    assert won(row["act_mktprcfl_cvprc_lwtrsprc"]) <= won(row["cv_prc"])
    assert won(row["cvisstk_cnt"]) == won(row["bd_fta"]) // won(row["cv_prc"])
    assert row["bddd"][4:6] == "년 " and row["ovis_fta"] == "-"


def test_cvbd_requires_the_date_window(http, world, key):
    corp_code = world.scalar("SELECT corp_code FROM dart_cvbd LIMIT 1")
    assert http.get(f"{BASE}/cvbdIsDecsn.json", params={"crtfc_key": key, "corp_code": corp_code}).json() == BAD_FIELD


def test_each_cb_decision_is_also_a_listed_disclosure(http, world, key):
    cb = world.rows("SELECT corp_code, rcept_no, _rcept_dt FROM dart_cvbd ORDER BY rcept_no DESC LIMIT 1")[0]
    body = http.get(f"{BASE}/list.json", params={"crtfc_key": key, "corp_code": cb["corp_code"], "pblntf_ty": "B",
                                                 "bgn_de": cb["_rcept_dt"], "end_de": cb["_rcept_dt"]}).json()
    match = [r for r in body["list"] if r["rcept_no"] == cb["rcept_no"]]
    assert [r["report_nm"] for r in match] == ["주요사항보고서(전환사채권발행결정)"]


def test_key_accounts_balance_and_share_the_report_receipt_number(http, key):
    body = http.get(f"{BASE}/fnlttSinglAcnt.json", params={"crtfc_key": key, "corp_code": "00126380",
                                                           "bsns_year": "2025", "reprt_code": "11011"}).json()
    assert body["status"] == "000" and {r["fs_div"] for r in body["list"]} == {"CFS", "OFS"}
    for fs in ("CFS", "OFS"):
        acc = {r["account_nm"]: won(r["thstrm_amount"]) for r in body["list"] if r["fs_div"] == fs}
        assert acc["자산총계"] == acc["부채총계"] + acc["자본총계"] == acc["유동자산"] + acc["비유동자산"]
    first = body["list"][0]
    assert (first["thstrm_nm"].startswith("제 "), first["thstrm_dt"], first["bfefrmtrm_dt"], first["currency"]) == (
        True, "2025.12.31 현재", "2023.12.31 현재", "KRW")
    filings = http.get(f"{BASE}/list.json", params={"crtfc_key": key, "corp_code": "00126380", "bgn_de": "20260101",
                                                    "end_de": "20260630", "pblntf_detail_ty": "A001"}).json()["list"]
    assert first["rcept_no"] in [f["rcept_no"] for f in filings if f["report_nm"].endswith("사업보고서 (2025.12)")]


def test_quarterly_key_accounts_carry_cumulative_income(http, key):
    rows = http.get(f"{BASE}/fnlttSinglAcnt.json", params={"crtfc_key": key, "corp_code": "00164779",
                                                           "bsns_year": "2025", "reprt_code": "11012"}).json()["list"]
    sales = next(r for r in rows if r["account_nm"] == "매출액" and r["fs_div"] == "CFS")
    assert sales["thstrm_nm"].endswith("반기") and sales["thstrm_dt"] == "2025.01.01 ~ 2025.06.30"
    assert won(sales["thstrm_add_amount"]) > won(sales["thstrm_amount"]) and "bfefrmtrm_amount" not in sales


@pytest.mark.parametrize("params", [{"bsns_year": "2025", "reprt_code": "11010"}, {"bsns_year": "25", "reprt_code": "11011"},
                                    {"reprt_code": "11011"}])
def test_key_accounts_bad_fields_are_status_100(http, key, params):
    r = http.get(f"{BASE}/fnlttSinglAcnt.json", params={"crtfc_key": key, "corp_code": "00126380", **params})
    assert r.json() == BAD_FIELD


def test_key_accounts_of_a_year_without_reports_are_013(http, key):
    r = http.get(f"{BASE}/fnlttSinglAcnt.json", params={"crtfc_key": key, "corp_code": "00126380",
                                                        "bsns_year": "2019", "reprt_code": "11011"})
    assert r.json() == NO_DATA


def test_corp_code_is_a_zip_listing_every_corporation(http, world, key):
    r = http.get(f"{BASE}/corpCode.xml", params={"crtfc_key": key})
    assert r.headers["content-type"] == "application/x-msdownload"
    with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
        assert zf.namelist() == ["CORPCODE.xml"]
        root = ET.fromstring(zf.read("CORPCODE.xml"))
    entries = {e.findtext("corp_code"): e for e in root.findall("list")}
    assert len(entries) == world.count("dart_corp")
    samsung = entries["00126380"]
    assert [(c.tag, c.text) for c in samsung][:3] == [("corp_code", "00126380"), ("corp_name", "삼성전자"),
                                                       ("stock_code", "005930")]
    unlisted = world.scalar("SELECT corp_code FROM dart_corp WHERE corp_cls = 'E' LIMIT 1")
    assert entries[unlisted].findtext("stock_code") == " "
    assert http.get(f"{BASE}/corpCode.xml", params={"crtfc_key": key}).content == r.content


def test_corp_code_with_a_bad_key_is_small_xml_not_a_zip(http):
    r = http.get(f"{BASE}/corpCode.xml", params={"crtfc_key": "nope"})
    assert not r.content.startswith(b"PK")
    root = ET.fromstring(r.content)
    assert (root.tag, root.findtext("status")) == ("result", "010")


@pytest.mark.parametrize(("kind", "status"), [(FaultKind.RATE_LIMIT, "020"), (FaultKind.SERVER_ERROR, "900"),
                                              (FaultKind.UNAVAILABLE, "800")])
def test_faults_render_as_dart_statuses(kind, status):
    request = Request({"type": "http", "method": "GET", "path": "/dart/api/list.json", "headers": [],
                       "query_string": b""})
    r = dart.fault_response(kind, request)
    assert r.status_code == 200
    assert r.body.decode() == f'{{"status": "{status}", "message": "{dart.MESSAGES[status]}"}}'


def test_chain_company_name_to_cb_floor_to_closing_price(http, keys, key):
    with zipfile.ZipFile(io.BytesIO(http.get(f"{BASE}/corpCode.xml", params={"crtfc_key": key}).content)) as zf:
        root = ET.fromstring(zf.read("CORPCODE.xml"))
    entry = next(e for e in root.findall("list") if e.findtext("corp_name") == "라이트론")
    corp_code, ticker = entry.findtext("corp_code"), entry.findtext("stock_code")
    assert (corp_code, ticker) == ("00367482", "069540")
    cbs = http.get(f"{BASE}/cvbdIsDecsn.json", params={"crtfc_key": key, "corp_code": corp_code,
                                                       "bgn_de": "20241101", "end_de": "20261130"}).json()["list"]
    assert len(cbs) >= 2
    cb = cbs[0]
    floor, cv_prc = won(cb["act_mktprcfl_cvprc_lwtrsprc"]), won(cb["cv_prc"])
    assert floor <= cv_prc
    bas_dt = cb["bddd"].replace("년 ", "").replace("월 ", "").replace("일", "")
    item = http.get("/datago/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo", params={
        "serviceKey": keys.first("krx"), "resultType": "json", "likeSrtnCd": ticker, "basDt": bas_dt,
    }).json()["response"]["body"]["items"]["item"]
    assert item["srtnCd"] == ticker and 0.5 < cv_prc / int(item["clpr"]) < 2
