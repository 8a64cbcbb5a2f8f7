"""OpenDART 전자공시 (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="dart", title="OpenDART 전자공시", domain="finance",
    live_base_url="https://opendart.fss.or.kr/api", host="opendart.fss.or.kr", host_prefix="/dart",
    key_param="crtfc_key", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
