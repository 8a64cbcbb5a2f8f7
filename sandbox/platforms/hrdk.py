"""한국산업인력공단 (HRD Korea) on data.go.kr: ``https://apis.data.go.kr/B490007/...``.

HRD's provider envelope has no ``response`` root in JSON (``{"header":…,"body":{"items":[…]}}``),
takes ``dataFormat=json|xml`` (XML by default) and answers no data with resultCode ``03``.
Services:

* ``/qualExamSchd/getQualExamSchdList`` — exam rounds (implYy, qualgbCd, jmCd). A jmCd selects
  the rounds of its grade (국가기술자격) or its own rounds (국가전문자격).
* ``/qualAcquPtcond/getQualAcquPtcond`` — new holders; acquYy and qualgbCd are required.
* ``/openQst/getOpenQstList`` (numOfRows ≤ 50, else resultCode 930) and ``/openQst/getOpenQst``
  (one paper with its ``fileList``).
* ``/qualPassRate/getQualPassRateList`` — pass statistics per qualification and year. No
  data.go.kr path for these is documented; the service is styled like its siblings under
  B490007 and keeps the field names of Q-Net's statistics (``statisYy, jmFldNm, pilPassRate,
  silPassRate…``) and the ``baseYY`` year parameter of the other HRD statistics services.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import CIParams, PlatformContext
from .datago import DatagoProvider, DatagoService, Envelope, gateway_error, serve_datago
from .jsonio import compact
from .xmlio import XML_DECL, element

SPEC = platform_spec("hrdk")

PROVIDER = DatagoProvider(format_param="dataFormat", envelope=Envelope.NO_RESPONSE_ROOT, ok_message="NORMAL SERVICE",
                          nodata_code="03")
OPEN_QST_MAX_ROWS = 50
# The series a jmCd belongs to is resolved first and passed on under this internal parameter.
_SERIES_PARAM = "_seriesCd"



def _schedule_row(row: dict[str, Any]) -> dict[str, Any]:
    # implSeq is the one number HRD prints as a JSON number; every other field is a string.
    return {k: (v if k == "implSeq" else str(v)) for k, v in row.items() if not k.startswith("_")}


SCHEDULE = DatagoService(
    "getQualExamSchdList", "hrdk_exam_schd", order_by="implYy, qualgbCd, _series_cd, implSeq",
    filters={"implYy": "implYy", "qualgbCd": "qualgbCd", _SERIES_PARAM: "_series_cd"}, format_row=_schedule_row)
ACQUISITION = DatagoService(
    "getQualAcquPtcond", "hrdk_acqu", order_by="acquYy, qualgbCd, jmCd, acquMm, rgnCd, ageGrupCd, genderCd",
    filters={p: p for p in ("acquYy", "qualgbCd", "rgnCd", "ageGrupCd", "genderCd", "seriesCd", "jmCd", "jmNm")},
    required=("acquYy", "qualgbCd"))
OPEN_QST_LIST = DatagoService(
    "getOpenQstList", "hrdk_open_qst", order_by="qualgbCd, jmCd, artlSeq",
    filters={"qualgbCd": "qualgbCd", "seriesCd": "seriesCd", "jmCd": "jmCd"}, like_filters={"jmNm": "jmNm"},
    max_rows=OPEN_QST_MAX_ROWS, max_rows_code="930")
PASS_RATE = DatagoService(
    "getQualPassRateList", "hrdk_pass_rate", order_by="statisYy, jmCd",
    filters={"baseYY": "statisYy", "jmCd": "jmCd", "grdCd": "grdCd"}, like_filters={"jmNm": "jmFldNm"})


def _with_params(request: Request, params: dict[str, str]) -> Request:
    """The same request with a rewritten query string (for parameters resolved before serving)."""
    scope = dict(request.scope, query_string=str(QueryParams(params)).encode())
    return Request(scope, request.receive)


def create_app(pctx: PlatformContext) -> Starlette:
    def plain(svc: DatagoService):
        async def endpoint(request: Request) -> Response:
            return serve_datago(pctx, PROVIDER, svc, request)
        return endpoint

    async def schedule(request: Request) -> Response:
        params = {k: v for k, v in request.query_params.items() if k != _SERIES_PARAM}
        jm_cd = CIParams(request.query_params).get("jmCd")
        if jm_cd:
            series = pctx.world.scalar("SELECT seriesCd FROM hrdk_qual WHERE jmCd = ?", [jm_cd])
            params[_SERIES_PARAM] = series or "-"  # an unknown jmCd matches nothing
        return serve_datago(pctx, PROVIDER, SCHEDULE, _with_params(request, params))

    async def open_qst(request: Request) -> Response:
        return _open_qst_detail(pctx, request)

    return Starlette(routes=[
        Route("/qualExamSchd/getQualExamSchdList", schedule),
        Route("/qualAcquPtcond/getQualAcquPtcond", plain(ACQUISITION)),
        Route("/openQst/getOpenQstList", plain(OPEN_QST_LIST)),
        Route("/openQst/getOpenQst", open_qst),
        Route("/qualPassRate/getQualPassRateList", plain(PASS_RATE)),
    ])


def _open_qst_detail(pctx: PlatformContext, request: Request) -> Response:
    """One published paper: its fields, its text and ``fileList`` directly under ``body``."""
    params = CIParams(request.query_params)
    key = params.get("serviceKey")
    if not key or not pctx.key_ok(key):
        return gateway_error("30", style=PROVIDER.gateway_style)
    if pctx.is_removed("getOpenQst"):
        return gateway_error("12", style=PROVIDER.gateway_style)
    xml = (params.get("dataFormat") or "xml").lower() != "json"
    seq = params.get("artlSeq") or ""
    if not seq:
        return _render({"resultCode": "11", "resultMsg": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR."}, None, xml)
    rows = pctx.world.rows("SELECT * FROM hrdk_open_qst WHERE artlSeq = TRY_CAST(? AS BIGINT)", [seq])
    if not rows:
        return _render({"resultCode": "03", "resultMsg": "NODATA_ERROR"}, None, xml)
    row = rows[0]
    files = pctx.world.rows("SELECT fileNm, fileUrl FROM hrdk_open_qst_file WHERE artlSeq = ? ORDER BY fileSeq",
                            [row["artlSeq"]])
    body = {k: str(v) for k, v in row.items() if not k.startswith("_")}
    body = body | {"contents": row["_contents"], "fileList": files}
    return _render({"resultCode": "00", "resultMsg": PROVIDER.ok_message}, body, xml)


def _render(header: dict[str, Any], body: dict[str, Any] | None, xml: bool) -> Response:
    if xml:
        inner = element("header", header)
        if body is not None:
            fields = "".join(element(k, v) for k, v in body.items() if k != "fileList")
            inner += f"<body>{fields}{element('fileList', body['fileList'])}</body>"
        return Response(f"{XML_DECL}<response>{inner}</response>", media_type="text/xml;charset=UTF-8")
    payload = {"header": header} | ({"body": body} if body is not None else {})
    return Response(compact(payload), media_type="application/json;charset=UTF-8")


_GATEWAY_FAULT_CODES = {FaultKind.RATE_LIMIT: "22", FaultKind.SERVER_ERROR: "01", FaultKind.UNAVAILABLE: "04"}


def fault_response(kind: FaultKind, request: Request) -> Response:
    """The data.go.kr gateway answers quota, internal and provider failures in its own XML envelope."""
    return gateway_error(_GATEWAY_FAULT_CODES.get(kind, "99"), style=PROVIDER.gateway_style)
