"""예금보험공사 부보금융회사 정보 (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="kdic", title="예금보험공사 부보금융회사 정보", domain="finance",
    live_base_url="https://apis.data.go.kr/B190017/service", host="apis.data.go.kr", host_prefix="/datago",
    key_param="ServiceKey", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
