"""경기데이터드림 (openapi.gg.go.kr): every Gyeonggi dataset as a hub-family list service.

    https://openapi.gg.go.kr/{SERVICE}?KEY=…&Type=json&pIndex=1&pSize=100&SIGUN_CD=41110&SIGUN_NM=수원시

The services (the named real ones such as ``Tbggibllbrm`` and ``GENRESTRT`` and the whole long
tail) come from the ``district_datasets`` catalog through ``datasets.gyeonggi_dataset_services``
and are served by ``hub.serve_hub_service``: XML unless ``Type=json``, parameter names matched
case-insensitively, keyless calls answered in 5-row sample mode, an unknown key ERROR-290,
more than 1,000 rows per page ERROR-336, and no data the wrapper-less INFO-200.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import CIParams, PlatformContext, wants_xml
from .datasets import gyeonggi_dataset_services
from .hub import HubAuth, hub_result, serve_hub_service

SPEC = platform_spec("gg")

AUTH = HubAuth(invalid_key_code="ERROR-290", keyless_sample=True)


def create_app(pctx: PlatformContext) -> Starlette:
    services = {s.name: s for s in gyeonggi_dataset_services(pctx.world)}

    async def handle(request: Request) -> Response:
        svc = services.get(request.path_params["service"].strip("/"))
        if svc is None:
            return unknown_service(pctx, request)
        return serve_hub_service(pctx, svc, request, AUTH)

    return Starlette(routes=[Route("/{service:path}", handle)])


def unknown_service(pctx: PlatformContext, request: Request) -> Response:
    """No such service: the key is still checked first, as for a known one."""
    params = CIParams(request.query_params)
    fmt = params.get("Type")
    if fmt is not None and fmt.lower() not in ("json", "xml"):
        return hub_result("ERROR-301", xml=False)
    xml = wants_xml(fmt, default_xml=True)
    key = params.get("KEY")
    if key and not pctx.key_ok(key):
        return hub_result(AUTH.invalid_key_code, xml=xml)
    return hub_result("ERROR-310", xml=xml)


def fault_response(kind: FaultKind, request: Request) -> Response:
    xml = wants_xml(CIParams(request.query_params).get("Type"), default_xml=True)
    if kind is FaultKind.RATE_LIMIT:
        return hub_result("ERROR-337", xml=xml)
    if kind is FaultKind.SERVER_ERROR:
        return hub_result("ERROR-500", xml=xml)
    # UNAVAILABLE: the portal's web front answers with its own maintenance page.
    return HTMLResponse("<html><head><title>경기데이터드림</title></head><body><h1>서비스 점검 중입니다.</h1>"
                        "<p>이용에 불편을 드려 죄송합니다.</p></body></html>", status_code=503)
