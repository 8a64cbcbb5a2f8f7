"""교육 데이터 (NEIS 교육정보 개방 포털·학교알리미) (stub: filled in by its owner)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..faults import FaultKind
from .base import PlatformContext, PlatformSpec

SPEC = PlatformSpec(
    id="edu", title="교육 데이터 (NEIS 교육정보 개방 포털·학교알리미)", domain="education",
    live_base_url="https://open.neis.go.kr/hub", host="open.neis.go.kr", host_prefix="/neis",
    key_param="KEY", formats=("json", "xml"))


def create_app(pctx: PlatformContext) -> Starlette:
    return Starlette(routes=[])


def fault_response(kind: FaultKind, request: Request) -> Response:
    return PlainTextResponse("fault", status_code=500)
