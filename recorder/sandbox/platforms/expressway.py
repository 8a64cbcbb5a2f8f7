"""한국도로공사 공공데이터 포털 (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="ex", title="한국도로공사 공공데이터 포털", domain="traffic",
    live_base_url="https://data.ex.co.kr/openapi", host="data.ex.co.kr", host_prefix="/ex",
    key_param="key", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
