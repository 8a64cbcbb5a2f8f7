"""OpenDART 전자공시: list, company, cvbdIsDecsn, fnlttSinglAcnt and the corpCode.xml ZIP.

OpenDART's conventions, reproduced here: the format is the path suffix (``list.json`` /
``list.xml``); every answer carries ``status``/``message`` with HTTP 200 ("000" 정상,
"013" no data, "010" unknown key, "100" bad field, "101" wrong URL); list.json pages with
``page_no``/``page_count`` (≤ 100) and JSON-number paging fields; without ``corp_code`` the
search window may span at most three calendar months; corpCode.xml is a ZIP on success but
a small XML document on failure.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from datetime import date
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import PlatformContext, parse_positive_int
from .xmlio import element

SPEC = platform_spec("dart")

MESSAGES = {
    "000": "정상",
    "010": "등록되지 않은 키입니다.",
    "013": "조회된 데이타가 없습니다.",
    "020": "요청 제한을 초과하였습니다.",
    "100": "필드의 부적절한 값입니다. 필드 설명에 없는 값을 사용한 경우에 발생하는 메시지입니다.",
    "101": "잘못된 URL입니다.",
    "800": "원활한 공시서비스를 위하여 오픈API 서비스가 중지 중입니다.",
    "900": "정의되지 않은 오류가 발생하였습니다.",
}
WINDOW_MESSAGE = "검색기간은 3개월만 가능합니다"  # status 100 when a corp-less search spans > 3 months
WORLD_TODAY = "20261130"  # the world's "today": list.json's default end_de
MAX_PAGE_COUNT = 100
XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>'
LIST_FIELDS = ("corp_cls", "corp_name", "corp_code", "stock_code", "report_nm", "rcept_no", "flr_nm", "rcept_dt", "rm")
COMPANY_FIELDS = ("corp_code", "corp_name", "corp_name_eng", "stock_name", "stock_code", "ceo_nm", "corp_cls",
                  "jurir_no", "bizr_no", "adres", "hm_url", "ir_url", "phn_no", "fax_no", "induty_code", "est_dt",
                  "acc_mt")
AMOUNT_FIELDS = ("thstrm_amount", "thstrm_add_amount", "frmtrm_amount", "frmtrm_add_amount", "bfefrmtrm_amount")
REPRT_CODES = ("11013", "11012", "11014", "11011")
PBLNTF_TYPES = tuple("ABCDEFGHIJ")
CORP_CLASSES = ("Y", "K", "N", "E")
SORT_COLUMNS = {"date": "rcept_dt", "crp": "corp_name", "rpt": "report_nm"}
_CORP_CODE = re.compile(r"\d{8}")
_YMD = re.compile(r"\d{8}")


class DartError(Exception):
    """A request OpenDART answers with a non-000 status."""

    def __init__(self, status: str, message: str | None = None):
        super().__init__(status)
        self.status, self.message = status, message or MESSAGES[status]


def render(body: dict[str, Any], xml: bool) -> Response:
    """DART's envelope: JSON as is, or <result> with one <list> element per list row."""
    if not xml:
        return Response(json.dumps(body, ensure_ascii=False), media_type="application/json;charset=UTF-8")
    inner = "".join(element(k, v) for k, v in body.items())
    return Response(f"{XML_DECL}<result>{inner}</result>", media_type="application/xml;charset=UTF-8")


def error_response(status: str, xml: bool, message: str | None = None) -> Response:
    return render({"status": status, "message": message or MESSAGES[status]}, xml)


def _ymd(value: str | None) -> str | None:
    if value in (None, ""):
        return None
    if not _YMD.fullmatch(value):
        raise DartError("100")
    try:
        date(int(value[:4]), int(value[4:6]), int(value[6:]))
    except ValueError:
        raise DartError("100") from None
    return value


def _corp_code(value: str | None, required: bool) -> str | None:
    if value in (None, ""):
        if required:
            raise DartError("100")
        return None
    if not _CORP_CODE.fullmatch(value):
        raise DartError("100")
    return value


def _within_three_months(bgn: str, end: str) -> bool:
    """DART counts calendar months forward from bgn_de: end_de ≤ bgn_de + 3 months."""
    y, m, d = int(bgn[:4]), int(bgn[4:6]) + 3, int(bgn[6:])
    y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
    last_day = (date(y + m // 12, m % 12 + 1, 1) - date(y, m, 1)).days
    return end <= f"{y:04d}{m:02d}{min(d, last_day):02d}"


def _amount(value: Any) -> Any:
    return f"{value:,}" if isinstance(value, int) else value


class Dart:
    """The endpoint handlers over one world."""

    def __init__(self, pctx: PlatformContext):
        self.pctx = pctx
        self.world = pctx.world
        self._corp_zip: bytes | None = None

    # ---- endpoints: each takes the query params and returns the success body ----

    def list(self, q) -> dict[str, Any]:
        corp_code = _corp_code(q.get("corp_code"), required=False)
        end = _ymd(q.get("end_de")) or WORLD_TODAY
        bgn = _ymd(q.get("bgn_de")) or end
        if corp_code is None and not _within_three_months(bgn, end):
            raise DartError("100", WINDOW_MESSAGE)
        page_no = parse_positive_int(q.get("page_no"), 1)
        page_count = parse_positive_int(q.get("page_count"), 10)
        if page_no is None or page_count is None or page_count > MAX_PAGE_COUNT:
            raise DartError("100")
        sort = SORT_COLUMNS.get(q.get("sort") or "date")
        direction = {"desc": "DESC", "asc": "ASC"}.get((q.get("sort_mth") or "desc").lower())
        if sort is None or direction is None:
            raise DartError("100")
        clauses, params = ["rcept_dt BETWEEN ? AND ?"], [bgn, end]
        for name, column, allowed in (("corp_code", "corp_code", None), ("pblntf_ty", "_pblntf_ty", PBLNTF_TYPES),
                                      ("pblntf_detail_ty", "_pblntf_detail_ty", None),
                                      ("corp_cls", "corp_cls", CORP_CLASSES)):
            value = q.get(name)
            if value:
                if allowed is not None and value not in allowed:
                    raise DartError("100")
                clauses.append(f"{column} = ?")
                params.append(value)
        if (q.get("last_reprt_at") or "N").upper() == "Y":
            clauses.append("_last = 'Y'")
        total, rows = self.world.page("dart_disclosure", " AND ".join(clauses), params,
                                      order_by=f"{sort} {direction}, rcept_no {direction}",
                                      offset=(page_no - 1) * page_count, limit=page_count,
                                      columns=LIST_FIELDS)
        if not rows:
            raise DartError("013")
        return {"status": "000", "message": MESSAGES["000"], "page_no": page_no, "page_count": page_count,
                "total_count": total, "total_page": math.ceil(total / page_count), "list": rows}

    def company(self, q) -> dict[str, Any]:
        corp_code = _corp_code(q.get("corp_code"), required=True)
        rows = self.world.rows(f"SELECT {', '.join(COMPANY_FIELDS)} FROM dart_corp WHERE corp_code = ?", [corp_code])
        if not rows:
            raise DartError("013")
        return {"status": "000", "message": MESSAGES["000"], **rows[0]}

    def cvbdIsDecsn(self, q) -> dict[str, Any]:  # noqa: N802 - the endpoint's real name
        corp_code = _corp_code(q.get("corp_code"), required=True)
        bgn, end = _ymd(q.get("bgn_de")), _ymd(q.get("end_de"))
        if bgn is None or end is None:
            raise DartError("100")
        rows = self.world.rows("SELECT * EXCLUDE (_rcept_dt) FROM dart_cvbd WHERE corp_code = ? "
                               "AND _rcept_dt BETWEEN ? AND ? ORDER BY rcept_no", [corp_code, bgn, end])
        if not rows:
            raise DartError("013")
        return {"status": "000", "message": MESSAGES["000"], "list": rows}

    def fnlttSinglAcnt(self, q) -> dict[str, Any]:  # noqa: N802 - the endpoint's real name
        corp_code = _corp_code(q.get("corp_code"), required=True)
        year, reprt = q.get("bsns_year") or "", q.get("reprt_code") or ""
        if not re.fullmatch(r"\d{4}", year) or reprt not in REPRT_CODES:
            raise DartError("100")
        rows = self.world.rows("SELECT * FROM dart_fnltt WHERE corp_code = ? AND bsns_year = ? AND reprt_code = ? "
                               "ORDER BY fs_div, ord", [corp_code, year, reprt])
        if not rows:
            raise DartError("013")
        out = [{k: _amount(v) if k in AMOUNT_FIELDS else (str(v) if k == "ord" else v)
                for k, v in r.items() if v is not None} for r in rows]
        return {"status": "000", "message": MESSAGES["000"], "list": out}

    def corp_code_zip(self) -> bytes:
        """CORPCODE.xml zipped once per app, with a fixed timestamp so the bytes never change."""
        if self._corp_zip is None:
            rows = self.world.rows("SELECT corp_code, _short_name, stock_code, modify_date "
                                   "FROM dart_corp ORDER BY corp_code")
            entries = "".join(
                "\n    <list>\n"
                f"        {element('corp_code', r['corp_code'])}\n"
                f"        {element('corp_name', r['_short_name'])}\n"
                f"        <stock_code>{r['stock_code'] or ' '}</stock_code>\n"  # unlisted: a single space
                f"        {element('modify_date', r['modify_date'])}\n"
                "    </list>" for r in rows)
            xml = f'{XML_DECL}\n<result>{entries}\n</result>\n'.encode()
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr(zipfile.ZipInfo("CORPCODE.xml", date_time=(2026, 11, 30, 0, 0, 0)), xml,
                            compress_type=zipfile.ZIP_DEFLATED)
            self._corp_zip = buffer.getvalue()
        return self._corp_zip


JSON_XML_ENDPOINTS = ("list", "company", "cvbdIsDecsn", "fnlttSinglAcnt")


def create_app(pctx: PlatformContext) -> Starlette:
    dart = Dart(pctx)

    async def endpoint(request: Request) -> Response:
        name = request.path_params["name"]
        stem, _, ext = name.rpartition(".")
        xml = ext == "xml"
        q = request.query_params
        if not pctx.key_ok(q.get("crtfc_key")):
            return error_response("010", xml)
        if name == "corpCode.xml" and not pctx.is_removed("corpCode"):
            return Response(dart.corp_code_zip(), media_type="application/x-msdownload",
                            headers={"Content-Disposition": "attachment; filename=CORPCODE.zip"})
        if stem not in JSON_XML_ENDPOINTS or ext not in ("json", "xml") or pctx.is_removed(stem):
            return error_response("101", xml)
        try:
            return render(getattr(dart, stem)(q), xml)
        except DartError as exc:
            return error_response(exc.status, xml, exc.message)

    return Starlette(routes=[Route("/{name:path}", endpoint)])


_FAULT_STATUS = {FaultKind.RATE_LIMIT: "020", FaultKind.SERVER_ERROR: "900", FaultKind.UNAVAILABLE: "800"}


def fault_response(kind: FaultKind, request: Request) -> Response:
    """DART reports every fault in its own envelope with HTTP 200."""
    return error_response(_FAULT_STATUS.get(kind, "900"), request.url.path.endswith(".xml"))
