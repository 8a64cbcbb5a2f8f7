"""한국도로공사 공공데이터 포털 (data.ex.co.kr/openapi/{group}/{operation}).

The bespoke Korea Expressway envelope::

    {"code":"SUCCESS","message":"인증키가 유효합니다.","count":226,"pageNo":1,"numOfRows":99,"pageSize":3,"list":[…]}

``pageSize`` is the number of pages, not rows per page. ``key=`` authenticates (a bad key is
HTTP 200 ``{"code":"ERROR",…}``), ``type=json|xml`` picks the format (XML by default),
``numOfRows``/``pageNo`` page. Quirks reproduced: the list key differs per operation
(``trafficIc``, ``realUnitTrtmVO``, ``realTimeSMSList``), ``count`` is a string on
locationinfoRest, rows of curStateStation carry ``pageNo``/``numOfRows`` = null, typo
field names (``trafficAmout``, ``diselPrice``, ``altitude`` for longitude), unitCode
padded with a trailing space in trafficIc, prices as "1,699원" / "X", a request without a
User-Agent (or with curl's) is blocked with HTTP 400, unknown operations are HTTP 404,
and a non-numeric paging value is a Java exception served as an HTTP 200 HTML page (JSON
``{"exception":{"message":…}}`` when the client sends ``Accept: application/json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import MAX_INT, PlatformContext
from .jsonio import compact
from .xmlio import XML_DECL, element

SPEC = platform_spec("ex")

OK_MESSAGE = "인증키가 유효합니다."
BAD_KEY_MESSAGE = "인증키가 유효하지 않습니다."
RATE_LIMIT_MESSAGE = "일일 트래픽 허용량을 초과하였습니다."
DEFAULT_ROWS = 10
MAX_ROWS = 1000
# Live feeds: the sandbox serves one deterministic snapshot; recordings of these never replay.
REALTIME_SERVICES = ("burstInfo/realTimeSms", "trtm/realUnitTrtm", "odtraffic/trafficAmountByRealtime")


def won(value: Any) -> str:
    return "X" if value is None else f"{int(value):,}원"


def char4(value: Any) -> str:
    return f"{value:<4}"  # unitCode is a CHAR(4) column upstream: "101 "


@dataclass(frozen=True)
class ExOperation:
    """One data.ex.co.kr operation served from one world table."""

    path: str  # "group/operation"
    table: str
    order_by: str
    fields: tuple[tuple[str, str], ...]  # (output field, column), in output order
    list_key: str = "list"
    filters: tuple[tuple[str, str], ...] = ()  # (request param, column), exact match
    int_filters: tuple[tuple[str, str], ...] = ()  # numeric columns: a non-number is a Java exception
    fixed: tuple[tuple[str, str], ...] = ()  # params whose only value with data is the given one
    formats: tuple[tuple[str, Callable[[Any], str]], ...] = ()  # output field -> formatter
    max_rows: int = MAX_ROWS  # larger numOfRows are silently cut to this
    paged: bool = True  # restOilList ignores paging and returns everything
    count_as_string: bool = False
    row_nulls: tuple[str, ...] = ()  # fields present in every row as null
    latest: str = ""  # column whose latest value applies when its param is absent


def _same(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, n) for n in names)


REST_FIELDS = (("stdRestCd", "stdRestCd"), ("stdRestNm", "stdRestNm"), ("routeCd", "routeNo"),
               ("routeNm", "routeName"), ("svarAddr", "svarAddr"))
REST_FILTERS = (("stdRestCd", "stdRestCd"), ("stdRestNm", "stdRestNm"), ("routeCd", "routeNo"),
                ("routeNm", "routeName"))
PRICE_FORMATS = (("gasolinePrice", won), ("diselPrice", won), ("lpgPrice", won))

OPERATIONS: tuple[ExOperation, ...] = (
    ExOperation("trafficapi/trafficIc", "ex_traffic_ic", "unitCode, sumDate, sumTm, inoutType, tcsType",
                _same("sumDate", "sumTm", "unitCode", "unitName", "inoutType", "tcsType", "carType",
                      "trafficAmout", "exDivCode"),
                list_key="trafficIc", filters=(("exDivCode", "exDivCode"), ("unitCode", "unitCode"),
                                               ("sumDate", "sumDate")),
                int_filters=(("inOutType", "inoutType"), ("tcsType", "tcsType"), ("carType", "carType")),
                fixed=(("tmType", "1"),), formats=(("unitCode", char4),), latest="sumDate"),
    ExOperation("locationinfo/locationinfoUnit", "ex_unit", "unitCode",
                _same("unitCode", "unitName", "routeNo", "routeName", "xValue", "yValue"),
                filters=_same("unitCode", "unitName", "routeNo", "routeName")),
    ExOperation("locationinfo/locationinfoRest", "ex_rest", "stdRestCd",
                _same("unitCode", "unitName", "routeNo", "routeName", "xValue", "yValue", "stdRestCd",
                      "serviceAreaCode"),
                filters=_same("stdRestCd", "unitCode", "routeNo", "routeName", "serviceAreaCode"),
                count_as_string=True),
    ExOperation("business/curStateStation", "ex_fuel", "serviceAreaCode",
                (("serviceAreaCode", "serviceAreaCode"), ("serviceAreaCode2", "serviceAreaCode2"),
                 ("serviceAreaName", "serviceAreaName"), ("routeCode", "routeNo"), ("routeName", "routeName"),
                 ("direction", "direction"), ("oilCompany", "oilCompany"), ("lpgYn", "lpgYn"),
                 ("gasolinePrice", "gasolinePrice"), ("diselPrice", "diselPrice"), ("lpgPrice", "lpgPrice"),
                 ("telNo", "telNo"), ("svarAddr", "svarAddr")),
                filters=(("routeCode", "routeNo"), ("routeName", "routeName"), ("direction", "direction"),
                         ("oilCompany", "oilCompany"), ("serviceAreaCode", "serviceAreaCode"),
                         ("serviceAreaCode2", "serviceAreaCode2"), ("serviceAreaName", "serviceAreaName")),
                formats=PRICE_FORMATS, row_nulls=("pageNo", "numOfRows")),
    ExOperation("restinfo/restOilList", "ex_fuel", "stdRestCd",
                REST_FIELDS + (("oilCompany", "oilCompany"), ("lpgYn", "lpgYn"), ("gasolinePrice", "gasolinePrice"),
                               ("diselPrice", "diselPrice"), ("lpgPrice", "lpgPrice"), ("telNo", "telNo")),
                filters=REST_FILTERS, formats=PRICE_FORMATS, paged=False),
    ExOperation("restinfo/restBrandList", "ex_rest_brand", "stdRestCd, brdCode",
                REST_FIELDS + _same("brdCode", "brdName", "brdDesc", "stime", "etime"), filters=REST_FILTERS),
    ExOperation("restinfo/restConvList", "ex_rest_conv", "stdRestCd, psCode",
                REST_FIELDS + _same("psCode", "psName", "psDesc", "stime", "etime"), filters=REST_FILTERS),
    ExOperation("restinfo/restBestfoodList", "ex_rest_food", "stdRestCd, seq",
                REST_FIELDS + _same("seq", "foodNm", "foodCost", "etc", "bestfoodyn", "premiumyn", "recommendyn",
                                    "seasonMenu"), filters=REST_FILTERS),
    ExOperation("trtm/realUnitTrtm", "ex_trtm", "startUnitCode, endUnitCode",
                _same("startUnitCode", "startUnitNm", "endUnitCode", "endUnitNm", "stdDate", "stdTime",
                      "tcsCarTypeCode", "tcsCarTypeName", "timeAvg", "efcvTrfl"),
                list_key="realUnitTrtmVO",
                filters=(("iStartUnitCode", "startUnitCode"), ("iEndUnitCode", "endUnitCode")), max_rows=99),
    ExOperation("burstInfo/realTimeSms", "ex_incident", "accDate, accHour",
                _same("accDate", "accHour", "accType", "accTypeCode", "smsText", "roadNM", "nosunNM",
                      "startEndTypeCode", "latitude", "altitude"),
                list_key="realTimeSMSList"),
    ExOperation("odtraffic/trafficAmountByRealtime", "ex_section_traffic", "routeNo, conzoneId, vdsId",
                _same("routeName", "routeNo", "trafficAmout", "conzoneId", "conzoneName", "stdDate", "stdHour",
                      "vdsId", "speed", "shareRatio", "timeAvg", "grade", "updownTypeCode"),
                filters=_same("routeNo", "conzoneId", "updownTypeCode")),
)


class JavaException(Exception):
    """What the live servlet throws on bad input; rendered as its error page."""


def parse_number(value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise JavaException(f'For input string: "{value}"') from None
    if not -MAX_INT - 1 <= number <= MAX_INT:  # Integer.parseInt overflows the same way
        raise JavaException(f'For input string: "{value}"')
    return number


def text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def render(payload: dict[str, Any], xml: bool) -> Response:
    if xml:
        return Response(XML_DECL + element("data", payload), media_type="application/xml;charset=UTF-8")
    return Response(compact(payload), media_type="application/json;charset=UTF-8")


def exception_page(request: Request, message: str) -> Response:
    """HTTP 200 servlet error: HTML by default, JSON when the client asks for JSON."""
    if "application/json" in request.headers.get("accept", ""):
        return Response(json.dumps({"exception": {"message": message}}, ensure_ascii=False),
                        media_type="application/json;charset=UTF-8")
    return HTMLResponse("<!DOCTYPE html><html><head><title>Error</title></head><body><h2>오류가 발생했습니다.</h2>"
                        f"<p>{message.replace('<', '&lt;')}</p></body></html>")


def not_found() -> Response:
    return HTMLResponse("<!doctype html><html lang=\"en\"><head><title>HTTP Status 404 – Not Found</title></head>"
                        "<body><h1>HTTP Status 404 – Not Found</h1></body></html>", status_code=404)


def blocked(request: Request) -> bool:
    agent = request.headers.get("user-agent", "")
    return agent == "" or agent.lower().startswith("curl/")


def serve(pctx: PlatformContext, op: ExOperation, request: Request, latest: dict[str, str]) -> Response:
    params = request.query_params
    xml = (params.get("type") or "xml").lower() != "json"
    if not pctx.key_ok(params.get("key")):
        return render({"code": "ERROR", "message": BAD_KEY_MESSAGE}, xml)
    try:
        rows_wanted = parse_number(params.get("numOfRows"), DEFAULT_ROWS)
        page_no = max(1, parse_number(params.get("pageNo"), 1))
        int_values = [(col, parse_number(params.get(p), 0)) for p, col in op.int_filters if params.get(p) is not None]
    except JavaException as exc:
        return exception_page(request, str(exc))
    num_rows = min(max(1, rows_wanted), op.max_rows)
    clauses, values = [], []
    for param, column in op.filters:
        value = (params.get(param) or "").strip() or latest.get(column, "")
        if value:
            clauses.append(f'"{column}" = ?')
            values.append(value)
    for column, number in int_values:
        clauses.append(f'"{column}" = ?')
        values.append(number)
    if any(params.get(p, want) != want for p, want in op.fixed):
        clauses.append("FALSE")
    where = " AND ".join(clauses)
    if op.paged:
        offset, limit = (page_no - 1) * num_rows, num_rows
    else:
        page_no, offset, limit = 1, 0, pctx.world.count(op.table, where, values)
        num_rows = max(limit, 1)
    total, rows = pctx.world.page(op.table, where, values, order_by=op.order_by, offset=offset, limit=limit)
    formats = dict(op.formats)
    out = []
    for row in rows:
        item = {name: (formats[name](row[col]) if name in formats else text(row[col])) for name, col in op.fields}
        item.update({name: None for name in op.row_nulls})
        out.append(item)
    return render({"code": "SUCCESS", "message": OK_MESSAGE,
                   "count": str(total) if op.count_as_string else total, "pageNo": page_no, "numOfRows": num_rows,
                   "pageSize": math.ceil(total / num_rows), op.list_key: out}, xml)


def create_app(pctx: PlatformContext) -> Starlette:
    operations = {op.path: op for op in OPERATIONS}
    latest = {op.path: {op.latest: pctx.world.scalar(f'SELECT max("{op.latest}") FROM "{op.table}"')}
              for op in OPERATIONS if op.latest}

    async def handle(request: Request) -> Response:
        if blocked(request):
            return PlainTextResponse("Request Blocked", status_code=400)
        path = f"{request.path_params['group']}/{request.path_params['operation']}"
        op = operations.get(path)
        if op is None or pctx.is_removed(path):
            return not_found()
        return serve(pctx, op, request, latest.get(path, {}))

    async def other(request: Request) -> Response:
        return PlainTextResponse("Request Blocked", status_code=400) if blocked(request) else not_found()

    return Starlette(routes=[Route("/{group}/{operation}", handle), Route("/{rest:path}", other)])


def fault_response(kind: FaultKind, request: Request) -> Response:
    if kind is FaultKind.RATE_LIMIT:
        xml = (request.query_params.get("type") or "xml").lower() != "json"
        return render({"code": "ERROR", "message": RATE_LIMIT_MESSAGE}, xml)
    if kind is FaultKind.SERVER_ERROR:
        return exception_page(request, "java.lang.NullPointerException")
    # UNAVAILABLE: the front web server answers for a stopped application server.
    return HTMLResponse("<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1>"
                        "</body></html>", status_code=503)
