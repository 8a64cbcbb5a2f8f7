"""금융위원회 주식시세정보 (KRX 시세) (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="krx", title="금융위원회 주식시세정보 (KRX 시세)", domain="finance",
    live_base_url="https://apis.data.go.kr/1160100/service", host="apis.data.go.kr", host_prefix="/datago",
    key_param="serviceKey", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
