"""예금보험공사 (KDIC) on data.go.kr: insured institutions, their products, the fund build-up.

KDIC's provider differs from FSC's in two ways reproduced here: the JSON answer is rooted at
the operation name (``{"getInsurgTrgetFnltInfoList": {"header": .., "item": [..]}}``) rather
than ``response``, and "no data" is resultCode "03". The key parameter is spelled
``ServiceKey`` in KDIC's spec; the gateway accepts either spelling.

Only the institution list's path is documented; the product and fund operations follow
KDIC's naming pattern (``GetInsurgTrget…Service`` / ``get…List``) and are this sandbox's
choice.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import PlatformContext
from .datago import DatagoProvider, DatagoService, Envelope, gateway_error, serve_datago

SPEC = platform_spec("kdic")

PROVIDER = DatagoProvider(envelope=Envelope.OPERATION_ROOT, nodata_code="03")
FUND_PROVIDER = DatagoProvider(envelope=Envelope.OPERATION_ROOT, nodata_code="03", ok_message="OK")

# path → (provider, service)
SERVICES: dict[str, tuple[DatagoProvider, DatagoService]] = {
    "GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList": (PROVIDER, DatagoService(
        operation="getInsurgTrgetFnltInfoList", table="kdic_institution", order_by='"num"',
        filters={"fncsecDscdNm": "fncsecDscdNm"}, like_filters={"fnccmpNm": "fnccmpNm"})),
    "GetInsurgTrgetPrdtInfoService/getInsurgTrgetPrdtInfoList": (PROVIDER, DatagoService(
        operation="getInsurgTrgetPrdtInfoList", table="kdic_product", order_by='"num"',
        filters={"fncsecDscdNm": "fncsecDscdNm", "prdKndNm": "prdKndNm", "isrgTgtYn": "isrgTgtYn"},
        like_filters={"fnccmpNm": "fnccmpNm", "prdNm": "prdNm"})),
    "GetDpstInsrncFundMakeInfoService/getDpstInsrncFundMakeInfoList": (FUND_PROVIDER, DatagoService(
        operation="getDpstInsrncFundMakeInfoList", table="kdic_fund", order_by='"num"',
        filters={"baseTm": "_baseTm", "baseYr": "baseYr", "fndMakDvsnNm": "fndMakDvsnNm"})),
}


def create_app(pctx: PlatformContext) -> Starlette:
    async def operation(request: Request) -> Response:
        entry = SERVICES.get(request.path_params["path"])
        if entry is None:
            return gateway_error("12", style=PROVIDER.gateway_style)
        provider, svc = entry
        return serve_datago(pctx, provider, svc, request)

    return Starlette(routes=[Route("/{path:path}", operation)])


_FAULT_CODES = {FaultKind.RATE_LIMIT: "22", FaultKind.SERVER_ERROR: "01", FaultKind.UNAVAILABLE: "04"}


def fault_response(kind: FaultKind, request: Request) -> Response:
    """Faults surface as gateway rejections: quota (22), application error (01), provider down (04)."""
    return gateway_error(_FAULT_CODES.get(kind, "99"), style=PROVIDER.gateway_style)
