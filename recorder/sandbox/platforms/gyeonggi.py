"""경기데이터드림 (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="gg", title="경기데이터드림", domain="district",
    live_base_url="https://openapi.gg.go.kr", host="openapi.gg.go.kr", host_prefix="/gg",
    key_param="KEY", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
