"""FSC/KRX stock prices on data.go.kr: envelope, paging, filters, number printing, errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.requests import Request

from sandbox.faults import FaultKind
from sandbox.platforms import krx
from sandbox.world.finance.prices import tick_size

PRICE = "/datago/1160100/service/GetStockSecuritiesInfoService/getStockPriceInfo"
ITEM = "/datago/1160100/service/GetKrxListedInfoService/getItemInfo"
PRICE_FIELDS = ["basDt", "srtnCd", "isinCd", "itmsNm", "mrktCtg", "clpr", "vs", "fltRt", "mkp", "hipr", "lopr",
                "trqu", "trPrc", "lstgStCnt", "mrktTotAmt"]


@pytest.fixture(scope="module")
def key(keys):
    return keys.first("krx")


def get_json(http, path, key, **params):
    return http.get(path, params={"serviceKey": key, "resultType": "json", **params}).json()["response"]


def test_one_day_across_all_tickers_pages_with_numeric_totals(http, world, key):
    body = get_json(http, PRICE, key, basDt="20251015", numOfRows=5, pageNo=2)
    assert body["header"] == {"resultCode": "00", "resultMsg": "NORMAL SERVICE."}
    assert {k: body["body"][k] for k in ("numOfRows", "pageNo", "totalCount")} == {
        "numOfRows": 5, "pageNo": 2, "totalCount": world.count("krx_price", '"basDt" = ?', ["20251015"])}
    items = body["body"]["items"]["item"]
    assert [list(i) for i in items] == [PRICE_FIELDS] * 5
    assert all(isinstance(v, str) for i in items for v in i.values())
    expected = world.rows('SELECT "srtnCd" FROM krx_price WHERE "basDt" = ? ORDER BY "srtnCd" LIMIT 5 OFFSET 5',
                          ["20251015"])
    assert [i["srtnCd"] for i in items] == [r["srtnCd"] for r in expected]


def test_a_single_hit_is_an_object_not_a_list(http, key):
    item = get_json(http, PRICE, key, likeSrtnCd="005930", basDt="20251015")["body"]["items"]["item"]
    assert isinstance(item, dict)
    assert (item["isinCd"], item["itmsNm"], item["mrktCtg"]) == ("KR7005930003", "삼성전자", "KOSPI")


def test_no_data_is_code_00_with_total_zero_and_empty_items(http, key):
    body = get_json(http, PRICE, key, basDt="20251006")  # 추석 holiday: the market was closed
    assert body == {"header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE."},
                    "body": {"numOfRows": 10, "pageNo": 1, "totalCount": 0, "items": ""}}


def test_prices_exist_only_on_krx_trading_days(world):
    days = {r["basDt"] for r in world.rows('SELECT DISTINCT "basDt" FROM krx_price WHERE "basDt" LIKE ?', ["202510%"])}
    assert "20251010" in days and not days & {"20251003", "20251006", "20251007", "20251008", "20251009"}


def test_one_ticker_over_a_range_is_consistent_day_to_day(http, world, key):
    ticker = world.scalar("SELECT stock_code FROM dart_corp WHERE corp_cls = 'K' ORDER BY corp_code LIMIT 1")
    body = get_json(http, PRICE, key, likeSrtnCd=ticker, beginBasDt="20250101", endBasDt="20250401", numOfRows=100)
    items = body["body"]["items"]["item"]
    assert body["body"]["totalCount"] == len(items) and all(i["basDt"] < "20250401" for i in items)
    for newer, older in zip(items, items[1:]):
        clpr, prev = int(newer["clpr"]), int(older["clpr"])
        assert int(newer["vs"]) == clpr - prev and abs(clpr - prev) <= prev * 0.3 + tick_size(prev)
        assert int(newer["lopr"]) <= min(clpr, int(newer["mkp"])) <= max(clpr, int(newer["mkp"])) <= int(newer["hipr"])
        assert clpr % tick_size(clpr) == 0
        assert int(newer["mrktTotAmt"]) == clpr * int(newer["lstgStCnt"])


@pytest.mark.parametrize(("value", "printed"), [(-0.75, "-.75"), (0.11, ".11"), (1.5, "1.5"), (0.0, "0"),
                                                (-12.3, "-12.3"), (29.97, "29.97")])
def test_rates_print_without_leading_zero(value, printed):
    assert krx.rate(value) == printed


def test_numeric_range_filters_begin_inclusive_end_exclusive(http, world, key):
    body = get_json(http, PRICE, key, basDt="20251015", beginFltRt="5", endFltRt="10", numOfRows=1000)
    expected = world.count("krx_price", '"basDt" = ? AND "fltRt" >= 5 AND "fltRt" < 10', ["20251015"])
    assert body["body"]["totalCount"] == expected


def test_a_non_numeric_bound_matches_nothing(http, key):
    assert get_json(http, PRICE, key, basDt="20251015", beginVs="abc")["body"]["totalCount"] == 0


def test_market_filter_and_name_search(http, world, key):
    body = get_json(http, PRICE, key, basDt="20251015", mrktCls="KONEX")
    assert body["body"]["totalCount"] == world.count("krx_price", '"basDt" = ? AND "mrktCtg" = ?', ["20251015", "KONEX"])
    named = get_json(http, PRICE, key, likeItmsNm="하이닉스", likeBasDt="202510")["body"]
    assert named["totalCount"] == 18  # October 2025 had 18 trading days (추석 and 한글날 closures)
    assert {i["itmsNm"] for i in named["items"]["item"]} == {"SK하이닉스"}


def test_xml_is_the_default_format(http, key):
    root = ET.fromstring(http.get(PRICE, params={"serviceKey": key, "basDt": "20251015", "numOfRows": 2}).content)
    assert root.tag == "response" and root.findtext("header/resultCode") == "00"
    assert len(root.findall("body/items/item")) == 2 and root.findtext("body/items/item/basDt") == "20251015"


def test_unknown_key_is_a_gateway_xml_rejection_even_for_json(http):
    r = http.get(PRICE, params={"serviceKey": "wrong", "resultType": "json"})
    root = ET.fromstring(r.content)
    assert (root.tag, root.findtext("cmmMsgHeader/returnReasonCode"), root.findtext("cmmMsgHeader/returnAuthMsg")) == (
        "OpenAPI_ServiceResponse", "30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR")


def test_bad_paging_is_code_10(http, key):
    assert get_json(http, PRICE, key, pageNo="x")["header"]["resultCode"] == "10"


def test_unknown_operation_is_gateway_code_12(http, key):
    root = ET.fromstring(http.get("/datago/1160100/service/GetStockSecuritiesInfoService/getBondPrice",
                                  params={"serviceKey": key}).content)
    assert root.findtext("cmmMsgHeader/returnReasonCode") == "12"


def test_listed_item_info_links_ticker_to_company_registration(http, key):
    items = get_json(http, ITEM, key, likeSrtnCd="005930", beginBasDt="20251001", endBasDt="20251201")["body"]["items"]
    assert items["item"] == [
        {"basDt": d, "srtnCd": "005930", "isinCd": "KR7005930003", "mrktCtg": "KOSPI", "itmsNm": "삼성전자",
         "crno": "1301110006246", "corpNm": "삼성전자(주)"} for d in ("20251128", "20251031")]


@pytest.mark.parametrize(("kind", "code"), [(FaultKind.RATE_LIMIT, "22"), (FaultKind.SERVER_ERROR, "01"),
                                            (FaultKind.UNAVAILABLE, "04")])
def test_faults_render_as_gateway_rejections(kind, code):
    r = krx.fault_response(kind, Request({"type": "http", "method": "GET", "path": PRICE, "headers": [],
                                          "query_string": b""}))
    assert ET.fromstring(r.body).findtext("cmmMsgHeader/returnReasonCode") == code
