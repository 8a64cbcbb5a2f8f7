"""국가법령정보센터 (법제처 DRF) (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="law", title="국가법령정보센터 (법제처 DRF)", domain="law",
    live_base_url="https://www.law.go.kr/DRF", host="www.law.go.kr", host_prefix="/law",
    key_param="OC", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
