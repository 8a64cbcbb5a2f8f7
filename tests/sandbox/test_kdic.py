"""KDIC on data.go.kr: operation-rooted envelope, code 03 for no data, institution → products."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from starlette.requests import Request

from sandbox.faults import FaultKind
from sandbox.platforms import kdic

BASE = "/datago/B190017/service"
INST = f"{BASE}/GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList"
PRODUCTS = f"{BASE}/GetInsurgTrgetPrdtInfoService/getInsurgTrgetPrdtInfoList"
FUND = f"{BASE}/GetDpstInsrncFundMakeInfoService/getDpstInsrncFundMakeInfoList"
OK = {"resultCode": "00", "resultMsg": "NORMAL SERVICE."}


@pytest.fixture(scope="module")
def key(keys):
    return keys.first("kdic")


def call(http, path, key, **params):
    return http.get(path, params={"ServiceKey": key, "resultType": "json", **params}).json()


def test_institutions_are_rooted_at_the_operation_name(http, world, key):
    body = call(http, INST, key, fncsecDscdNm="은행", numOfRows=100)
    root = body["getInsurgTrgetFnltInfoList"]
    assert list(body) == ["getInsurgTrgetFnltInfoList"] and root["header"] == OK
    assert root["totalCount"] == world.count("kdic_institution", '"fncsecDscdNm" = ?', ["은행"])
    assert {"국민은행", "카카오뱅크", "토스뱅크"} <= {i["fnccmpNm"] for i in root["item"]}
    assert list(root["item"][0]) == ["num", "fncsecDscdNm", "fnccmpNm", "fncIstAdr", "cttpc", "hmpgUrladr",
                                     "isrgTgtYn", "lttdVal", "lgtdVal"]


def test_no_data_is_code_03_without_items(http, key):
    body = call(http, INST, key, fnccmpNm="없는금융회사")
    assert body == {"getInsurgTrgetFnltInfoList": {"header": {"resultCode": "03", "resultMsg": "NODATA_ERROR"}}}


def test_chain_institution_to_its_products_and_protection_status(http, world, key):
    inst = call(http, INST, key, fnccmpNm="카카오뱅크")["getInsurgTrgetFnltInfoList"]["item"]
    name = inst["fnccmpNm"]  # a single match comes back as an object
    root = call(http, PRODUCTS, key, fnccmpNm=name, numOfRows=100)["getInsurgTrgetPrdtInfoList"]
    items = root["item"] if isinstance(root["item"], list) else [root["item"]]
    assert root["totalCount"] == world.count("kdic_product", '"fnccmpNm" = ?', [name]) == len(items)
    protection = {i["prdKndNm"]: i["isrgTgtYn"] for i in items}
    assert protection.get("정기예금", "Y") == "Y" and protection.get("양도성예금증서(CD)", "N") == "N"


def test_fund_build_up_by_month_reports_every_account(http, key):
    root = call(http, FUND, key, baseTm="202401")["getDpstInsrncFundMakeInfoList"]
    assert root["header"] == {"resultCode": "00", "resultMsg": "OK"} and root["totalCount"] == 6
    assert {(i["baseYr"], i["baseMn"]) for i in root["item"]} == {("2024", "01")}
    assert {i["fndMakDvsnNm"] for i in root["item"]} >= {"은행계정", "상호저축은행계정"}


def test_xml_root_is_the_operation_name(http, key):
    r = http.get(INST, params={"ServiceKey": key, "numOfRows": 2})
    root = ET.fromstring(r.content)
    assert root.tag == "getInsurgTrgetFnltInfoList" and root.findtext("header/resultCode") == "00"
    assert len(root.findall("item")) == 2


def test_lowercase_service_key_spelling_is_accepted(http, key):
    r = http.get(INST, params={"serviceKey": key, "resultType": "json", "numOfRows": 1})
    assert r.json()["getInsurgTrgetFnltInfoList"]["header"] == OK


def test_unknown_key_is_a_gateway_rejection(http):
    root = ET.fromstring(http.get(INST, params={"ServiceKey": "wrong", "resultType": "json"}).content)
    assert root.findtext("cmmMsgHeader/returnReasonCode") == "30"


def test_bad_paging_is_code_10(http, key):
    assert call(http, INST, key, numOfRows="-1")["getInsurgTrgetFnltInfoList"]["header"]["resultCode"] == "10"


@pytest.mark.parametrize(("kind", "code"), [(FaultKind.RATE_LIMIT, "22"), (FaultKind.SERVER_ERROR, "01"),
                                            (FaultKind.UNAVAILABLE, "04")])
def test_faults_render_as_gateway_rejections(kind, code):
    r = kdic.fault_response(kind, Request({"type": "http", "method": "GET", "path": INST, "headers": [],
                                           "query_string": b""}))
    assert ET.fromstring(r.body).findtext("cmmMsgHeader/returnReasonCode") == code
