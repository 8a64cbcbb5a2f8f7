"""교육 데이터: the NEIS open API (open.neis.go.kr/hub) and the 학교알리미 disclosure API.

NEIS is a hub-family portal (``hub.py``): ``/hub/{SERVICE}?KEY=&Type=&pIndex=&pSize=``, XML
unless ``Type=json``, keyless calls in 5-row sample mode, ERROR-290 for a bad key, ERROR-336
above 1,000 rows, wrapper-less INFO-200 when nothing matches. Services: schoolInfo,
classInfo and schoolMajorinfo.

학교알리미 is a second app of the same platform (``SCHOOLINFO_SPEC``), mounted under its own
host prefix and accepting the same edu key; its handlers live in ``edu_schoolinfo.py``.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import CIParams, PlatformContext, wants_xml
from .edu_schoolinfo import create_schoolinfo_app, schoolinfo_fault
from .hub import HubService, hub_result, serve_hub_service

SPEC = platform_spec("edu")

SCHOOLINFO_SPEC = platform_spec("edu", "schoolinfo")

EXTRA_SPECS = (SCHOOLINFO_SPEC,)
EXTRA_APPS = ((SCHOOLINFO_SPEC, create_schoolinfo_app),)

SERVICES: tuple[HubService, ...] = (
    HubService("schoolInfo", "edu_school", order_by="ATPT_OFCDC_SC_CODE, SD_SCHUL_CODE",
               filters={"ATPT_OFCDC_SC_CODE": "ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE": "SD_SCHUL_CODE",
                        "SCHUL_KND_SC_NM": "SCHUL_KND_SC_NM", "LCTN_SC_NM": "LCTN_SC_NM",
                        "FOND_SC_NM": "FOND_SC_NM"},
               like_filters={"SCHUL_NM": "SCHUL_NM"}),  # NEIS matches school names by substring
    HubService("classInfo", "edu_class", order_by="ATPT_OFCDC_SC_CODE, SD_SCHUL_CODE, AY, _slot, _class_no",
               filters={p: p for p in ("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE", "AY", "GRADE", "DGHT_CRSE_SC_NM",
                                       "SCHUL_CRSE_SC_NM", "ORD_SC_NM", "DDDEP_NM")},
               required=("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE")),
    HubService("schoolMajorinfo", "edu_major", order_by="ATPT_OFCDC_SC_CODE, SD_SCHUL_CODE, DDDEP_NM",
               filters={p: p for p in ("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE", "DGHT_CRSE_SC_NM", "ORD_SC_NM")},
               required=("ATPT_OFCDC_SC_CODE",)),
)


def create_app(pctx: PlatformContext) -> Starlette:
    by_name = {s.name.lower(): s for s in SERVICES}

    async def service(request: Request) -> Response:
        svc = by_name.get(request.path_params["service"].lower())
        if svc is None:  # NEIS answers an unknown service name with ERROR-310
            xml = wants_xml(CIParams(request.query_params).get("Type"), default_xml=True)
            return hub_result("ERROR-310", xml=xml)
        return serve_hub_service(pctx, svc, request)

    return Starlette(routes=[Route("/{service}", service)])


_NEIS_FAULT_CODES = {FaultKind.RATE_LIMIT: "ERROR-337", FaultKind.SERVER_ERROR: "ERROR-500"}
_UNAVAILABLE_PAGE = ("<html><head><title>503 Service Unavailable</title></head><body>"
                     "<h1>Service Unavailable</h1></body></html>")


def fault_response(kind: FaultKind, request: Request) -> Response:
    """NEIS: ERROR-337 / ERROR-500 in the usual envelope; an outage is the web server's 503 page."""
    if request.scope.get("path", "").endswith("/openApi.do"):
        return schoolinfo_fault(kind)
    if kind is FaultKind.UNAVAILABLE:
        return HTMLResponse(_UNAVAILABLE_PAGE, status_code=503)
    xml = wants_xml(CIParams(request.query_params).get("Type"), default_xml=True)
    return hub_result(_NEIS_FAULT_CODES.get(kind, "ERROR-500"), xml=xml)
