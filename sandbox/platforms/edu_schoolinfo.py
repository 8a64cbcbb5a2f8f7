"""학교알리미 (www.schoolinfo.go.kr) disclosure API: ``/openApi.do``.

    /openApi.do?apiKey=…&apiType=0|62|09&pbanYr=2025&schulKndCode=02&sidoCode=50&sggCode=50110

One call returns every school of one kind in one 시·군·구 — there is no paging — as
``{"resultCode":"success","resultMsg":…,"list":[…]}`` with every value a string. Quirks kept:
``sggCode`` is required although documented as optional; ``pbanYr`` is required for the
disclosure items and only recent years are served (older years give an empty list); counts
carry the special-class part in brackets (``"COL_FGR_SUM":"610(4)"``); schools excluded from
a disclosure (``PBAN_EXCP_YN":"Y"``) come with blank numbers. Failures are HTTP 200 with
``resultCode "fail"`` (the wording of the messages is inferred, except the sggCode one).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..faults import FaultKind
from ..world.education.enrolment import SLOTS, YEARS
from .base import PlatformContext
from .jsonio import compact

# Disclosure years the live service still answers (the latest five of the world's years).
SERVED_PBAN_YEARS = YEARS[-5:]
KIND_CODES = ("02", "03", "04", "05", "06", "07")
OK_MESSAGE = "정상 처리되었습니다."
MESSAGES = {
    "key": "인증키가 유효하지 않습니다.",
    "apiType": "API 유형(apiType)이 유효하지 않습니다.",
    "schulKndCode": "학교급 코드(schulKndCode)는 필수 정보입니다.",
    "sggCode": "시군구 코드(sggCode)는 필수 정보입니다.",
    "pbanYr": "공시년도(pbanYr)는 필수 정보입니다.",
    "removed": "서비스가 종료되었습니다.",
    "rate": "일일 트래픽 제한을 초과하였습니다.",
}
_BASE = ("ATPT_OFCDC_ORG_NM", "JU_ORG_NM", "ADRCD_NM", "SCHUL_CODE", "SCHUL_NM", "SCHUL_KND_SC_CODE",
         "FOND_SC_CODE", "PBAN_EXCP_YN", "PBAN_EXCP_RSN")
# Course order of the 특수/각종 school columns (COL_SUM_1 = 초등부 ... COL_SUM_3 = 고등부).
_COURSE_NO = {"초등학교": 1, "중학교": 2, "고등학교": 3}


def _answer(payload: dict[str, Any]) -> Response:
    return Response(compact(payload), media_type="application/json;charset=UTF-8")


def _fail(reason: str) -> Response:
    return _answer({"resultCode": "fail", "resultMsg": MESSAGES[reason]})


def _num(value: float) -> str:
    return f"{value:.1f}"


def _basics(row: dict[str, Any]) -> dict[str, str]:
    """apiType 0: one school's basic record, from the school register."""
    return {
        "ATPT_OFCDC_ORG_NM": row["ATPT_OFCDC_SC_NM"], "JU_ORG_NM": row["JU_ORG_NM"],
        "ADRCD_NM": f"{row['LCTN_SC_NM']} {row['_sgg_nm']}", "SCHUL_CODE": row["_pbi_code"],
        "SCHUL_NM": row["SCHUL_NM"], "SCHUL_KND_SC_CODE": row["_kind_code"], "FOND_SC_CODE": row["FOND_SC_NM"],
        "HS_KND_SC_NM": row["HS_SC_NM"] or "", "BNHH_YN": "N", "SCHUL_FOND_TYP_CODE": "1",
        "DGHT_SC_CODE": row["DGHT_SC_NM"], "FOAS_MEMRD": row["FOAS_MEMRD"], "FOND_YMD": row["FOND_YMD"],
        "ADRCD_ID": row["_sgg_code"] + "10100", "ADRES_BRKDN": row["ORG_RDNMA"], "DTLAD_BRKDN": row["ORG_RDNDA"],
        "ZIP_CODE": row["ORG_RDNZC"], "SCHUL_RDNZC": row["ORG_RDNZC"], "SCHUL_RDNMA": row["ORG_RDNMA"],
        "SCHUL_RDNDA": row["ORG_RDNDA"], "LTTUD": f"{row['_lat']:.6f}", "LGTUD": f"{row['_lon']:.6f}",
        "USER_TELNO": row["ORG_TELNO"], "PERC_FAXNO": row["ORG_FAXNO"], "HMPG_ADRES": row["HMPG_ADRES"],
        "COEDU_SC_CODE": row["COEDU_SC_NM"], "ABSCH_YN": "N", "ABSCH_YMD": "", "CLOSE_YN": "N",
    }


def _slots(row: dict[str, Any]) -> list[tuple[str, int, int, int]]:
    """(course, grade, classes, students) of each grade slot the school runs."""
    return [(course, grade, row[f"_c{i + 1}"], row[f"_s{i + 1}"])
            for i, (course, grade) in enumerate(SLOTS[row["SCHUL_KND_SC_CODE"]])]


def _status(row: dict[str, Any]) -> dict[str, str]:
    """apiType 62 (학교 현황): classes per grade, totals with the special part in brackets."""
    slots = _slots(row)
    classes, students = sum(s[2] for s in slots), sum(s[3] for s in slots)
    sp, sp_students = row["_sp_classes"], row["_sp_students"]
    if row["SCHUL_KND_SC_CODE"] in ("05", "07"):
        out: dict[str, Any] = {}
        for course, no in _COURSE_NO.items():
            c = sum(s[2] for s in slots if s[0] == course)
            st = sum(s[3] for s in slots if s[0] == course)
            out |= {f"COL_SUM_{no}": str(c), f"COL_SUM_FGR{no}": str(st), f"AVG_SUM_FGR{no}": _num(st / c) if c else "0"}
        out |= {"COL_SUM_4": str(classes), "COL_SUM_FGR4": str(students), "AVG_SUM_FGR4": _num(students / classes)}
    else:
        out = {f"COL_{grade}": str(c) for _, grade, c, _ in slots}
        out |= {"COL_7": str(sp), "COL_8": "0", "COL_SUM": f"{classes}({sp})",
                "COL_FGR_SUM": f"{students}({sp_students})", "AVG_FGR_SUM": _num(students / classes),
                "SP_SUM": str(sp), "SP_FGR_SUM": str(sp_students)}
    return out


def _per_grade(row: dict[str, Any]) -> dict[str, str]:
    """apiType 09 (학년별·학급별 학생수): classes and students per grade."""
    slots = _slots(row)
    classes, students = sum(s[2] for s in slots), sum(s[3] for s in slots)
    out: dict[str, str] = {}
    if row["SCHUL_KND_SC_CODE"] not in ("05", "07"):
        for _, grade, c, st in slots:
            out |= {f"COL_C{grade}": str(c), f"COL_S{grade}": str(st)}
    return out | {"COL_C_SUM": str(classes), "COL_S_SUM": str(students), "COL_SUM": _num(students / classes)}


_DISCLOSURES = {"62": _status, "09": _per_grade}


def _disclosure_row(row: dict[str, Any], api_type: str) -> dict[str, str]:
    base = {k: row[k] for k in _BASE}
    values = _DISCLOSURES[api_type](row)
    if row["PBAN_EXCP_YN"] == "Y":  # excluded from this disclosure: the figures are blank
        values = dict.fromkeys(values, "")
    return base | values


def create_schoolinfo_app(pctx: PlatformContext) -> Starlette:
    async def open_api(request: Request) -> Response:
        q = request.query_params
        if not pctx.key_ok(q.get("apiKey")):
            return _fail("key")
        api_type = q.get("apiType", "")
        if api_type != "0" and api_type not in _DISCLOSURES:
            return _fail("apiType")
        if pctx.is_removed(f"apiType={api_type}"):
            return _fail("removed")
        kind, sgg, sido = q.get("schulKndCode", ""), q.get("sggCode", ""), q.get("sidoCode", "")
        if kind not in KIND_CODES:
            return _fail("schulKndCode")
        if not sgg:
            return _fail("sggCode")
        where, params = ["_sgg_code = ?"], [sgg]
        if sido:
            where.append("_sido_code = ?")
            params.append(sido)
        if api_type == "0":
            rows = pctx.world.rows(f"SELECT * FROM edu_school WHERE {' AND '.join(where)} AND _kind_code = ? "
                                   "ORDER BY _pbi_code", [*params, kind])
            return _answer({"resultCode": "success", "resultMsg": OK_MESSAGE, "list": [_basics(r) for r in rows]})
        year = q.get("pbanYr", "")
        if not year.isdigit():
            return _fail("pbanYr")
        rows = []
        if int(year) in SERVED_PBAN_YEARS:
            rows = pctx.world.rows(f"SELECT * FROM edu_status WHERE {' AND '.join(where)} "
                                   "AND SCHUL_KND_SC_CODE = ? AND _pban_yr = ? ORDER BY SCHUL_CODE",
                                   [*params, kind, int(year)])
        return _answer({"resultCode": "success", "resultMsg": OK_MESSAGE,
                        "list": [_disclosure_row(r, api_type) for r in rows]})

    return Starlette(routes=[Route("/openApi.do", open_api)])


def schoolinfo_fault(kind: FaultKind) -> Response:
    """Quota exhaustion answers like any failure; server trouble is the servlet container's page."""
    if kind is FaultKind.RATE_LIMIT:
        return _fail("rate")
    status, title = (503, "Service Unavailable") if kind is FaultKind.UNAVAILABLE else (500, "Internal Server Error")
    return HTMLResponse(f"<html><head><title>Error {status}</title></head><body><h1>HTTP Status {status} – {title}"
                        "</h1></body></html>", status_code=status)
