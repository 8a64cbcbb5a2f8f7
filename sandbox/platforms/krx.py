"""금융위원회 주식시세정보 (KRX 시세) on data.go.kr: daily prices and listed-item info.

Two FSC operations behind the data.go.kr gateway (``serviceKey``, ``resultType``, paging by
``pageNo``/``numOfRows``), both in the standard ``response/header/body`` envelope. FSC
answers "no data" with resultCode "00", totalCount 0 and ``items: ""``. Every value is a
string, and rates drop the leading zero the way the feed prints them (".11", "-.75").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import PlatformContext
from .datago import DatagoProvider, DatagoService, gateway_error, serve_datago

SPEC = platform_spec("krx")

PROVIDER = DatagoProvider()
_RANGE_FIELDS = ("vs", "fltRt", "trqu", "trPrc", "lstgStCnt", "mrktTotAmt")
_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)")
# Newest trading day first, then by short code (FSC lists the latest base date first).
_PRICE_ORDER = '"basDt" DESC, "srtnCd"'


def rate(value: float) -> str:
    """FSC's decimal style: no leading zero, no trailing zeros ("-.75", ".11", "1.5", "0")."""
    text = f"{abs(value):.2f}".rstrip("0").rstrip(".")
    text = text[1:] if text.startswith("0.") else text
    if text in ("", "0"):
        return "0"
    return ("-" if value < 0 else "") + text


def price_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: rate(v) if k == "fltRt" else str(v) for k, v in row.items()}


_ITEM_FILTERS = {"basDt": "basDt", "isinCd": "isinCd", "itmsNm": "itmsNm", "mrktCls": "mrktCtg"}
_ITEM_LIKE = {"likeSrtnCd": "srtnCd", "likeIsinCd": "isinCd", "likeItmsNm": "itmsNm"}
_DATE_RANGE = {"beginBasDt": ("basDt", ">="), "endBasDt": ("basDt", "<")}  # begin* inclusive, end* exclusive


SERVICES = {
    "GetStockSecuritiesInfoService/getStockPriceInfo": DatagoService(
        operation="getStockPriceInfo", table="krx_price", order_by=_PRICE_ORDER, format_row=price_row,
        filters=_ITEM_FILTERS, like_filters=_ITEM_LIKE, prefix_filters={"likeBasDt": "basDt"},
        range_filters={**_DATE_RANGE,
                       **{f"begin{f[0].upper()}{f[1:]}": (f, ">=") for f in _RANGE_FIELDS},
                       **{f"end{f[0].upper()}{f[1:]}": (f, "<") for f in _RANGE_FIELDS}}),
    "GetKrxListedInfoService/getItemInfo": DatagoService(
        operation="getItemInfo", table="krx_item_info", order_by=_PRICE_ORDER,
        filters={**_ITEM_FILTERS, "crno": "crno", "corpNm": "corpNm"},
        like_filters={**_ITEM_LIKE, "likeCorpNm": "corpNm"}, prefix_filters={"likeBasDt": "basDt"},
        range_filters=_DATE_RANGE),
}
_NUMERIC_PARAMS = tuple(p for p, (col, _) in SERVICES["GetStockSecuritiesInfoService/getStockPriceInfo"]
                        .range_filters.items() if col != "basDt")


def create_app(pctx: PlatformContext) -> Starlette:
    async def operation(request: Request) -> Response:
        svc = SERVICES.get(request.path_params["path"])
        if svc is None:
            return gateway_error("12", style=PROVIDER.gateway_style)
        bad = [p for p in _NUMERIC_PARAMS if (v := request.query_params.get(p)) and not _NUMBER.fullmatch(v)]
        if bad:  # a non-numeric bound matches nothing, as the provider's numeric comparison would
            svc = replace(svc, where="FALSE")
            request = _without(request, bad)
        return serve_datago(pctx, PROVIDER, svc, request)

    return Starlette(routes=[Route("/{path:path}", operation)])


def _without(request: Request, names: list[str]) -> Request:
    kept = [(k, v) for k, v in request.query_params.multi_items() if k not in names]
    return Request({**request.scope, "query_string": urlencode(kept).encode()}, request.receive)


_FAULT_CODES = {FaultKind.RATE_LIMIT: "22", FaultKind.SERVER_ERROR: "01", FaultKind.UNAVAILABLE: "04"}


def fault_response(kind: FaultKind, request: Request) -> Response:
    """Faults surface as gateway rejections: quota (22), application error (01), provider down (04)."""
    return gateway_error(_FAULT_CODES.get(kind, "99"), style=PROVIDER.gateway_style)
