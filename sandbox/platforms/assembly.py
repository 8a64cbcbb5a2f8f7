"""열린국회정보 (open.assembly.go.kr/portal/openapi): the National Assembly's open API.

Every service is ``/{ENDPOINT}`` with ``KEY``, ``Type`` (xml by default), ``pIndex`` and
``pSize`` and the hub-family envelope; endpoints are the portal's opaque codes
(``nwvrqwxyaytdsfvhu``) or names (``ALLNAMEMBER``). Quirks reproduced: one row comes back as
an object instead of a list; keyless calls get a 5-row sample; required inputs (AGE for
bills, DAE_NUM + CONF_DATE for minutes, AGE + BILL_ID for member votes) answer ERROR-300 when
missing; CONF_DATE matches as a substring (a year works); the current-members service ignores
UNIT_CD. Services are declared as data: one ``HubService`` per endpoint over a world table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import CIParams, PlatformContext, wants_xml
from .hub import HubService, hub_result, serve_hub_service, value_str

SPEC = platform_spec("assembly")


def projection(*fields: str) -> dict[str, Any]:
    """Output fields in order; "OUT=column" renames a stored column (the services share tables)."""
    pairs = [tuple(f.split("=", 1)) if "=" in f else (f, f) for f in fields]
    columns = tuple(dict.fromkeys(col for _, col in pairs))

    def format_row(row: dict[str, Any]) -> dict[str, Any]:
        return {out: value_str(row[col]) for out, col in pairs}

    return {"columns": columns, "format_row": format_row}


# Newest bill first. BILL_NO starts with the term, so this is BILL_NO DESC, and it is the
# table's physical order: pages stream off the scan instead of sorting a whole term.
BILL_ORDER = '"AGE" DESC, "BILL_NO" DESC'


def _svc(name: str, table: str, order_by: str, **kw: Any) -> HubService:
    return HubService(name=name, table=table, order_by=order_by, single_row_as_object=True, **kw)


MEMBER_BILL_FIELDS = projection(
    "BILL_ID", "BILL_NO", "BILL_NAME", "COMMITTEE", "PROPOSE_DT", "PROC_RESULT", "AGE", "DETAIL_LINK", "PROPOSER",
    "MEMBER_LIST", "LAW_PROC_DT", "LAW_PRESENT_DT", "LAW_SUBMIT_DT", "CMT_PROC_RESULT_CD", "CMT_PROC_DT",
    "CMT_PRESENT_DT", "COMMITTEE_DT", "PROC_DT", "COMMITTEE_ID", "PUBL_PROPOSER", "LAW_PROC_RESULT_CD",
    "RST_PROPOSER", "RST_MONA_CD", "PUBL_MONA_CD")
ALL_BILL_SEARCH_FIELDS = projection(
    "BILL_ID", "BILL_NO", "AGE", "BILL_NAME", "PROPOSER", "PROPOSER_KIND", "PROPOSE_DT",
    "CURR_COMMITTEE_ID=COMMITTEE_ID", "CURR_COMMITTEE=COMMITTEE", "COMMITTEE_DT", "COMMITTEE_PROC_DT=CMT_PROC_DT",
    "LINK_URL=DETAIL_LINK", "RST_PROPOSER", "LAW_PROC_RESULT_CD", "LAW_PROC_DT", "LAW_PRESENT_DT", "LAW_SUBMIT_DT",
    "CMT_PROC_RESULT_CD", "CMT_PROC_DT", "CMT_PRESENT_DT", "PROC_RESULT_CD=PROC_RESULT", "PROC_DT")
BILL_DETAIL_FIELDS = projection(
    "ERACO", "BILL_ID", "BILL_NO", "BILL_KND", "BILL_NM=BILL_NAME", "PPSR_KND=PROPOSER_KIND", "PPSR_NM=PROPOSER",
    "PPSL_SESS", "PPSL_DT=PROPOSE_DT", "JRCMIT_NM=COMMITTEE", "JRCMIT_CMMT_DT=COMMITTEE_DT",
    "JRCMIT_PRSNT_DT=CMT_PRESENT_DT", "JRCMIT_PROC_DT=CMT_PROC_DT", "JRCMIT_PROC_RSLT=CMT_PROC_RESULT_CD",
    "LAW_CMMT_DT=LAW_SUBMIT_DT", "LAW_PRSNT_DT=LAW_PRESENT_DT", "LAW_PROC_DT", "LAW_PROC_RSLT=LAW_PROC_RESULT_CD",
    "RGS_RSLN_DT=PROC_DT", "RGS_CONF_RSLT=PROC_RESULT", "GVRN_TRSF_DT", "PROM_DT", "PROM_NO", "LINK_URL=DETAIL_LINK")
MINUTES_ORDER = '"CONF_DATE" DESC, "CONFER_NUM" DESC, "_ITEM"'

SERVICES: dict[str, HubService] = {s.name: s for s in (
    _svc("nwvrqwxyaytdsfvhu", "assembly_member", '"HG_NM", "MONA_CD"',
         filters={p: p for p in ("HG_NM", "POLY_NM", "ORIG_NM", "SEX_GBN_NM", "MONA_CD")},
         like_filters={"CMITS": "CMITS"}),
    _svc("ALLNAMEMBER", "assembly_member_history", '"NAAS_NM", "NAAS_CD"',
         filters={p: p for p in ("NAAS_CD", "NAAS_NM")},
         like_filters={p: p for p in ("PLPT_NM", "ELECD_NM", "BLNG_CMIT_NM", "GTELT_ERACO")}),
    _svc("nzmimeepazxkubdpn", "assembly_bill", BILL_ORDER, where='"PROPOSER_KIND" = ?',
         where_params=("의원",), required=("AGE",),
         filters={p: p for p in ("AGE", "PROC_RESULT", "COMMITTEE", "BILL_ID", "BILL_NO")},
         like_filters={"BILL_NAME": "BILL_NAME", "PROPOSER": "PROPOSER"}, **MEMBER_BILL_FIELDS),
    _svc("TVBPMBILL11", "assembly_bill", BILL_ORDER,
         filters={"BILL_ID": "BILL_ID", "BILL_NO": "BILL_NO", "AGE": "AGE", "PROPOSER_KIND": "PROPOSER_KIND",
                  "CURR_COMMITTEE_ID": "COMMITTEE_ID", "CURR_COMMITTEE": "COMMITTEE",
                  "PROC_RESULT_CD": "PROC_RESULT", "PROC_DT": "PROC_DT"},
         like_filters={"BILL_NAME": "BILL_NAME", "PROPOSER": "PROPOSER"}, **ALL_BILL_SEARCH_FIELDS),
    _svc("ALLBILL", "assembly_bill", BILL_ORDER, required=("BILL_NO",),
         filters={"BILL_NO": "BILL_NO", "BILL_ID": "BILL_ID"}, **BILL_DETAIL_FIELDS),
    _svc("nxrvzonlafugpqjuh", "assembly_committee", '"HR_DEPT_CD"',
         filters={p: p for p in ("CMT_DIV_NM", "HR_DEPT_CD", "COMMITTEE_NAME")}),
    _svc("nktulghcadyhmiqxi", "assembly_committee_member", '"DEPT_CD", "_ROLE_ORDER", "HG_NM"',
         filters={p: p for p in ("DEPT_CD", "DEPT_NM", "HG_NM", "POLY_NM", "MONA_CD")}),
    _svc("nzbyfwhwaoanttzje", "assembly_minutes_plenary", MINUTES_ORDER, required=("DAE_NUM", "CONF_DATE"),
         filters={"DAE_NUM": "DAE_NUM", "CONFER_NUM": "CONFER_NUM"},
         like_filters={"CONF_DATE": "CONF_DATE", "TITLE": "TITLE"}),
    _svc("ncwgseseafwbuheph", "assembly_minutes_committee", MINUTES_ORDER, required=("DAE_NUM", "CONF_DATE"),
         filters={p: p for p in ("DAE_NUM", "CONFER_NUM", "COMM_NAME", "DEPT_CD")},
         like_filters={"CONF_DATE": "CONF_DATE", "TITLE": "TITLE"}),
    _svc("ncocpgfiaoituanbr", "assembly_vote", '"PROC_DT" DESC, "BILL_NO" DESC', required=("AGE",),
         filters={p: p for p in ("AGE", "BILL_ID", "BILL_NO")}),
    _svc("nojepdqqaweusdfbi", "assembly_vote_member", '"AGE", "BILL_ID", "DISP_ORDER"',
         required=("AGE", "BILL_ID"),
         filters={p: p for p in ("AGE", "BILL_ID", "HG_NM", "POLY_NM", "MONA_CD", "RESULT_VOTE_MOD")}),
)}


def create_app(pctx: PlatformContext) -> Starlette:
    async def endpoint(request: Request) -> Response:
        svc = SERVICES.get(request.path_params["endpoint"])
        if svc is None:
            return hub_result("ERROR-310", xml=_xml(request))
        return serve_hub_service(pctx, svc, request)

    return Starlette(routes=[Route("/{endpoint}", endpoint, methods=["GET", "POST"])])


def _xml(request: Request) -> bool:
    return wants_xml(CIParams(request.query_params).get("Type"), default_xml=True)


# Fault answers: quota and server faults come as hub result codes with HTTP 200; an outage is
# the portal's web server answering 503 with an HTML page.
_FAULTS: dict[FaultKind, Callable[[Request], Response]] = {
    FaultKind.RATE_LIMIT: lambda r: hub_result("ERROR-337", xml=_xml(r)),
    FaultKind.SERVER_ERROR: lambda r: hub_result("ERROR-500", xml=_xml(r)),
    FaultKind.UNAVAILABLE: lambda r: HTMLResponse(
        "<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body><h1>Service Unavailable"
        "</h1><p>서비스 점검 중입니다. 잠시 후 다시 이용해 주십시오.</p></body></html>", status_code=503),
}


def fault_response(kind: FaultKind, request: Request) -> Response:
    render = _FAULTS.get(kind, _FAULTS[FaultKind.SERVER_ERROR])
    return render(request)
