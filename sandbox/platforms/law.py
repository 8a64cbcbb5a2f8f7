"""국가법령정보센터 (법제처 DRF): ``lawSearch.do`` lists and ``lawService.do`` bodies.

What the real service does and this emulator reproduces:

* auth is ``OC`` (an account id); an unknown OC gets HTTP 200 with
  ``{"result":"사용자 정보 검증에 실패하였습니다.","msg":"…IP주소 및 도메인주소를 등록해 주세요."}``
  (``<Response><result>…`` in XML); a missing or blank OC says "필수입력요소 검증에 실패하였습니다.";
* ``type`` XML (default) / JSON / HTML. The JSON is a mechanical conversion of the XML, which
  explains its quirks: every value is a string, a single record is an object rather than a
  list, XML attributes become keys (``<law id="1">`` → ``"id":"1"``) and an element with an
  attribute and text becomes ``{"content": …, "<attr>": …}`` (법종구분, 소관부처);
* list envelopes per target (``LawSearch/law``, ``PrecSearch/prec``, ``DetcSearch/Detc``) with
  ``totalCnt``/``page``/``numOfRows``/``resultCode "00"``; zero hits drop the row key; row
  ``id`` is the 1-based position in the whole result; detail links echo the caller's OC;
  precedent lists print 선고일자 as ``YYYY.MM.DD`` while bodies print ``YYYYMMDD``;
* ``display`` defaults to 20 and is clamped to 100 (the documented maximum; the service is not
  known to reject larger values); unparseable paging values fall back to their defaults;
* a body lookup without a match answers a one-key object such as
  ``{"Law":"일치하는 법령이 없습니다. 법령명을 확인하여 주십시오."}`` (root ``Law`` for every target);
* a target this service does not route answers HTTP 404 (seen live for unrouted targets).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import MAX_INT, PlatformContext, parse_positive_int
from .jsonio import compact
from .xmlio import XML_DECL

SPEC = platform_spec("law")

VERIFY_MSG = "OPEN API 호출 시 사용자 검증을 위하여 정확한 서버장비의 IP주소 및 도메인주소를 등록해 주세요."
AUTH_FAILED = "사용자 정보 검증에 실패하였습니다."
OC_MISSING = "필수입력요소 검증에 실패하였습니다."
DEFAULT_DISPLAY, MAX_DISPLAY = 20, 100
# Text fields the real XML wraps in CDATA (names and prose; codes and dates are bare).
CDATA_FIELDS = frozenset((
    "법령명한글", "법령약칭명", "사건명", "법령명_한글", "법령명_한자", "법령명약칭", "조문제목", "조문내용", "항내용",
    "호내용", "부칙내용", "판시사항", "판결요지", "참조조문", "참조판례", "판례내용", "결정요지", "전문", "심판대상조문"))
JSON_TYPE, XML_TYPE = "application/json;charset=UTF-8", "text/xml;charset=UTF-8"


# --- XML-shaped values and their two renderings -------------------------------------------
# A node is a dict whose "@name" keys are XML attributes and whose "#text" key is its text;
# lists are repeated elements. JSON rendering follows the service's XML→JSON conversion.

def to_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {("content" if k == "#text" else k.lstrip("@")): to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return to_json(value[0]) if len(value) == 1 else [to_json(v) for v in value]
    return "" if value is None else str(value)


def to_xml(tag: str, value: Any) -> str:
    if isinstance(value, list):
        return "".join(to_xml(tag, v) for v in value)
    if isinstance(value, dict):
        attrs = "".join(f' {k[1:]}="{escape(str(v), {chr(34): "&quot;"})}"' for k, v in value.items()
                        if k.startswith("@"))
        inner = "".join(_text(tag, v) if k == "#text" else to_xml(k, v) for k, v in value.items()
                        if not k.startswith("@"))
        return f"<{tag}{attrs}>{inner}</{tag}>"
    return f"<{tag}>{_text(tag, value)}</{tag}>"


def _text(tag: str, value: Any) -> str:
    text = "" if value is None else str(value)
    if tag in CDATA_FIELDS:
        return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return escape(text)


def render(root: str, body: Any, fmt: str, status: int = 200) -> Response:
    if fmt == "JSON":
        payload = compact({root: to_json(body)})
        return Response(payload, status_code=status, media_type=JSON_TYPE)
    return Response(XML_DECL + to_xml(root, body), status_code=status, media_type=XML_TYPE)


def html_page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f'<!DOCTYPE html><html lang="ko"><head><meta charset="UTF-8"><title>{escape(title)}</title>'
                        f"</head><body>{body}</body></html>")


def not_routed() -> HTMLResponse:
    return HTMLResponse("<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
                        "<p>The requested URL was not found on this server.</p></body></html>", status_code=404)


# --- request parameters ---------------------------------------------------------------------

def _range(value: str) -> tuple[str, str] | None:
    """"20090101~20090130" (or "a,b") → bounds; None when it is not a range."""
    for sep in ("~", ","):
        if sep in value:
            low, high = (p.strip() for p in value.split(sep, 1))
            if low and high:
                return low, high
    return None


def _int_or_none(value: str) -> int | None:
    try:
        number = int(value)
    except ValueError:
        return None
    return number if abs(number) <= MAX_INT else None


@dataclass(frozen=True)
class Filter:
    """One optional request parameter narrowing a list: ``sql`` has one ``?`` (two for ranges)."""

    param: str
    sql: str
    kind: str = "text"  # text | int | range | intrange | codes

    def clause(self, value: str) -> tuple[str, list[Any]] | None:
        if self.kind in ("range", "intrange"):
            bounds = _range(value)
            if bounds is None:
                return None
            if self.kind == "intrange":
                nums = [_int_or_none(b) for b in bounds]
                return (self.sql, nums) if None not in nums else None
            return self.sql, list(bounds)
        if self.kind == "int":
            number = _int_or_none(value)
            return (self.sql, [number]) if number is not None else ("FALSE", [])
        if self.kind == "codes":  # nw=1,3 → 연혁+현행
            names = [{"1": "연혁", "2": "시행예정", "3": "현행"}.get(v.strip(), "") for v in value.split(",")]
            return f"{self.sql} IN ({', '.join('?' * len(names))})", names
        return self.sql, [value]


@dataclass(frozen=True)
class SearchTarget:
    """One ``lawSearch.do`` target: its envelope, table, search columns, sorts and filters."""

    target: str
    root: str
    item: str
    table: str
    sections: tuple[str, str]  # section name for search=1 (title) and search=2 (body)
    title_sql: str
    body_sql: str
    sorts: dict[str, str]
    default_sort: str
    row: Callable[[dict[str, Any], str], dict[str, Any]]
    title_field: str
    where: str = ""
    filters: tuple[Filter, ...] = field(default_factory=tuple)

    def query_clause(self, query: str, search: str) -> tuple[str, list[Any]]:
        if search == "2":
            return self.body_sql, [f"%{query}%"] * self.body_sql.count("?")
        # law names are matched without spaces; case titles as given
        pattern = query.replace(" ", "") if "_검색명" in self.title_sql else query
        return self.title_sql, [f"%{pattern}%"]


def _law_row(target: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    def row(r: dict[str, Any], oc: str) -> dict[str, Any]:
        link = f"/DRF/lawService.do?OC={oc}&target={target}&MST={r['법령일련번호']}&type=HTML"
        if target == "eflaw":
            link += f"&mobileYn=&efYd={r['시행일자']}"
        out = {k: r[k] for k in ("법령일련번호", "현행연혁코드", "법령명한글", "법령약칭명", "법령ID", "공포일자",
                                 "공포번호", "제개정구분명", "소관부처코드", "소관부처명", "법령구분명", "공동부령정보",
                                 "시행일자", "자법타법여부")}
        return {**out, "법령상세링크": link}
    return row


def _prec_row(r: dict[str, Any], oc: str) -> dict[str, Any]:
    d = r["선고일자"]
    out = {k: r[k] for k in ("판례일련번호", "사건명", "사건번호")}
    out["선고일자"] = f"{d[:4]}.{d[4:6]}.{d[6:]}"  # list prints dotted dates, the body does not
    out.update({k: r[k] for k in ("법원명", "법원종류코드", "사건종류명", "사건종류코드", "판결유형", "선고", "데이터출처명")})
    out["판례상세링크"] = f"/DRF/lawService.do?OC={oc}&target=prec&ID={r['판례일련번호']}&type=HTML&mobileYn="
    return out


def _detc_row(r: dict[str, Any], oc: str) -> dict[str, Any]:
    out = {k: r[k] for k in ("헌재결정례일련번호", "종국일자", "사건번호", "사건명")}
    link = f"/DRF/lawService.do?OC={oc}&target=detc&ID={r['헌재결정례일련번호']}&type=HTML"
    return {**out, "헌재결정례상세링크": link}


def _sorts(name: str, date: str, number: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    out = {"lasc": f'"{name}" ASC', "ldes": f'"{name}" DESC', "dasc": f'"{date}" ASC', "ddes": f'"{date}" DESC',
           "nasc": f'"{number}" ASC', "ndes": f'"{number}" DESC', **(extra or {})}
    return out


_LAW_NAME_MATCH = '"_검색명" LIKE ?'  # the name without spaces: "개인정보보호법" finds "개인정보 보호법"
_LAW_ARTICLE_MATCH = ('"법령일련번호" IN (SELECT "법령일련번호" FROM law_article '
                      'WHERE "조문내용" LIKE ? OR "_항" LIKE ?)')
_LAW_FILTERS = (
    Filter("efYd", '"시행일자" BETWEEN ? AND ?', "range"), Filter("ancYd", '"공포일자" BETWEEN ? AND ?', "range"),
    Filter("ancNo", '"공포번호" BETWEEN ? AND ?', "intrange"), Filter("date", '"공포일자" = ?'),
    Filter("nb", '"공포번호" = ?', "int"), Filter("org", '"소관부처코드" = ?'),
    Filter("knd", '(? IN ("_법종구분코드", "법령구분명"))'), Filter("rrClsCd", '"_제개정구분코드" = ?'))
_LAW_SORTS = _sorts("법령명한글", "공포일자", "공포번호", {"efasc": '"시행일자" ASC', "efdes": '"시행일자" DESC'})

SEARCH_TARGETS: dict[str, SearchTarget] = {t.target: t for t in (
    SearchTarget("law", "LawSearch", "law", "law_law", ("lawNm", "bdyText"), _LAW_NAME_MATCH,
                 _LAW_ARTICLE_MATCH, _LAW_SORTS, "lasc", _law_row("law"), "법령명한글", where='"현행연혁코드" = \'현행\'',
                 filters=_LAW_FILTERS),
    SearchTarget("eflaw", "LawSearch", "law", "law_law", ("lawNm", "bdyText"), _LAW_NAME_MATCH,
                 _LAW_ARTICLE_MATCH, _LAW_SORTS, "lasc", _law_row("eflaw"), "법령명한글",
                 filters=(*_LAW_FILTERS, Filter("LID", '"법령ID" = ?'), Filter("nw", '"현행연혁코드"', "codes"))),
    SearchTarget("prec", "PrecSearch", "prec", "law_prec", ("EvtNm", "bdyText"), '"사건명" LIKE ?',
                 '("판시사항" LIKE ? OR "판결요지" LIKE ? OR "참조조문" LIKE ? OR "판례내용" LIKE ?)',
                 _sorts("사건명", "선고일자", "법원명"), "ddes", _prec_row, "사건명", filters=(
                     Filter("org", '"법원종류코드" = ?', "int"), Filter("curt", '"법원명" = ?'),
                     Filter("JO", '"판례일련번호" IN (SELECT "판례일련번호" FROM law_prec_ref WHERE "법령명" = ?)'),
                     Filter("prncYd", '"선고일자" BETWEEN ? AND ?', "range"), Filter("date", '"선고일자" = ?'),
                     Filter("nb", '"사건번호" = ?'), Filter("datSrcNm", '"데이터출처명" = ?'))),
    SearchTarget("detc", "DetcSearch", "Detc", "law_detc", ("EvtNm", "bdyText"), '"사건명" LIKE ?',
                 '("판시사항" LIKE ? OR "결정요지" LIKE ? OR "전문" LIKE ? OR "참조조문" LIKE ?)',
                 _sorts("사건명", "종국일자", "사건번호", {"efasc": '"종국일자" ASC', "efdes": '"종국일자" DESC'}),
                 "lasc", _detc_row, "사건명", filters=(
                     Filter("date", '"종국일자" = ?'), Filter("edYd", '"종국일자" BETWEEN ? AND ?', "range"),
                     Filter("nb", '"사건번호" = ?'))),
)}
KEY_COLUMN = {"law_law": "법령일련번호", "law_prec": "판례일련번호", "law_detc": "헌재결정례일련번호"}
NO_MATCH = {"law": "일치하는 법령이 없습니다. 법령명을 확인하여 주십시오.",
            "prec": "일치하는 판례가 없습니다.  판례명을 확인하여 주십시오.",
            "detc": "일치하는 헌재결정례가 없습니다.  헌재결정례명을 확인하여 주십시오."}


# --- handlers -------------------------------------------------------------------------------

def _format(request: Request) -> str:
    fmt = (request.query_params.get("type") or "XML").upper()
    return fmt if fmt in ("JSON", "HTML") else "XML"


def _auth_error(pctx: PlatformContext, request: Request) -> Response | None:
    oc = request.query_params.get("OC")
    if oc is not None and pctx.key_ok(oc):
        return None
    payload = {"result": OC_MISSING if not oc else AUTH_FAILED, "msg": VERIFY_MSG}
    if _format(request) == "JSON":  # the JSON failure has no root element
        return Response(compact(payload), media_type=JSON_TYPE)
    return render("Response", payload, "XML")


def search(pctx: PlatformContext, request: Request) -> Response:
    q = request.query_params
    target = SEARCH_TARGETS.get(q.get("target") or "")
    if target is None or pctx.is_removed(target.target):
        return not_routed()
    display = min(parse_positive_int(q.get("display"), DEFAULT_DISPLAY) or DEFAULT_DISPLAY, MAX_DISPLAY)
    page = parse_positive_int(q.get("page"), 1) or 1
    query = (q.get("query") or "").strip()
    search_mode = "2" if q.get("search") == "2" else "1"
    clauses, params = ([target.where], []) if target.where else ([], [])
    if query:
        sql, values = target.query_clause(query, search_mode)
        clauses.append(sql)
        params += values
    for flt in target.filters:
        value = q.get(flt.param)
        built = flt.clause(value) if value else None
        if built:
            clauses.append(built[0])
            params += built[1]
    order = target.sorts.get(q.get("sort") or "", target.sorts[target.default_sort])
    key = KEY_COLUMN[target.table]
    total, rows = pctx.world.page(target.table, " AND ".join(clauses), params, order_by=f'{order}, "{key}"',
                                  offset=(page - 1) * display, limit=display)
    oc = q.get("OC") or ""
    items = [{"@id": str((page - 1) * display + i + 1), **target.row(r, oc)} for i, r in enumerate(rows)]
    fmt = _format(request)
    if fmt == "HTML":
        cells = "".join(f"<tr><td>{escape(it['@id'])}</td><td>{escape(str(it[target.title_field]))}</td></tr>"
                        for it in items)
        return html_page("국가법령정보 공동활용", f"<p>검색결과 {total}건</p><table>{cells}</table>")
    body: dict[str, Any] = {"target": target.target, "키워드": query or "*",
                            "section": target.sections[int(search_mode) - 1], "totalCnt": total, "page": page,
                            "numOfRows": len(items), "resultCode": "00", "resultMsg": "success"}
    if items:
        body[target.item] = items
    return render(target.root, body, fmt)


def _law_version(pctx: PlatformContext, q: Any) -> dict[str, Any] | None:
    """The version a body request names: MST pins one; ID or LM (name) mean the current one."""
    current = '"현행연혁코드" = \'현행\''
    if q.get("MST"):
        mst = _int_or_none(q["MST"])
        rows = pctx.world.rows('SELECT * FROM law_law WHERE "법령일련번호" = ?', [mst]) if mst is not None else []
    elif q.get("ID"):
        law_id = q["ID"].strip().zfill(6)
        rows = pctx.world.rows(f'SELECT * FROM law_law WHERE "법령ID" = ? AND {current}', [law_id])
    elif q.get("LM"):
        rows = pctx.world.rows(f'SELECT * FROM law_law WHERE "법령명한글" = ? AND {current}', [q["LM"].strip()])
    else:
        rows = []
    return rows[0] if rows else None


def _jo_filter(jo: str | None) -> tuple[str, list[Any]] | None:
    """JO=000200 → 제2조, 001002 → 제10조의2 (6 digits: article 4 + branch 2)."""
    if not jo:
        return "", []
    if len(jo) != 6 or not jo.isdigit():
        return None
    return ' AND "조문여부" = \'조문\' AND "조문번호" = ? AND "조문가지번호" = ?', [int(jo[:4]), int(jo[4:])]


def _article_node(a: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = {"@조문키": a["조문키"], "조문번호": a["조문번호"]}
    if a["조문가지번호"]:
        node["조문가지번호"] = a["조문가지번호"]
    node["조문여부"] = a["조문여부"]
    if a["조문제목"]:
        node["조문제목"] = a["조문제목"]
    node.update({"조문시행일자": a["조문시행일자"], "조문이동이전": "", "조문이동이후": "",
                 "조문변경여부": a["조문변경여부"], "조문내용": a["조문내용"]})
    if a["_항"]:
        node["항"] = json.loads(a["_항"])
    return node


def law_body(pctx: PlatformContext, q: Any) -> dict[str, Any] | None:
    law = _law_version(pctx, q)
    jo = _jo_filter(q.get("JO"))
    if law is None or jo is None:
        return None
    articles = pctx.world.rows(f'SELECT * FROM law_article WHERE "법령일련번호" = ?{jo[0]} ORDER BY "조문키"',
                               [law["법령일련번호"], *jo[1]])
    addenda = pctx.world.rows('SELECT * FROM law_addendum WHERE "법령ID" = ? AND "부칙공포일자" <= ? '
                              'ORDER BY "부칙공포일자" DESC, "부칙공포번호" DESC', [law["법령ID"], law["공포일자"]])
    basic = {"법령ID": law["법령ID"], "공포일자": law["공포일자"], "공포번호": law["공포번호"], "언어": "한글",
             "법종구분": {"@법종구분코드": law["_법종구분코드"], "#text": law["법령구분명"]},
             "법령명_한글": law["법령명한글"], "법령명_한자": law["법령명한글"], "법령명약칭": law["법령약칭명"],
             "제명변경여부": "N", "한글법령여부": "Y",
             "소관부처": {"@소관부처코드": law["소관부처코드"], "#text": law["소관부처명"]},
             "시행일자": law["시행일자"], "제개정구분": law["제개정구분명"], "별표편집여부": "N", "공포법령여부": "Y"}
    body: dict[str, Any] = {"@법령키": f"{law['법령ID']}{law['공포일자']}{law['공포번호']:05d}", "기본정보": basic}
    if articles:
        body["조문"] = {"조문단위": [_article_node(a) for a in articles]}
    body["부칙"] = {"부칙단위": [{"@부칙키": f"{a['부칙공포일자']}{a['부칙공포번호']:05d}", "부칙공포일자": a["부칙공포일자"],
                                "부칙공포번호": a["부칙공포번호"], "부칙내용": a["부칙내용"]} for a in addenda]}
    return body


def _case_body(pctx: PlatformContext, q: Any, table: str, fields: tuple[str, ...], extra: dict[str, str]
               ) -> dict[str, Any] | None:
    number = _int_or_none(q.get("ID") or "")
    rows = pctx.world.rows(f'SELECT * FROM {table} WHERE "{KEY_COLUMN[table]}" = ?', [number]) if number else []
    if not rows:
        return None
    return {**{("판례정보일련번호" if f == "판례일련번호" else f): rows[0][f] for f in fields}, **extra}


PREC_FIELDS = ("판례일련번호", "사건명", "사건번호", "선고일자", "선고", "법원명", "법원종류코드", "사건종류명",
               "사건종류코드", "판결유형", "판시사항", "판결요지", "참조조문", "참조판례", "판례내용")
DETC_FIELDS = ("헌재결정례일련번호", "종국일자", "사건번호", "사건명", "사건종류명", "판시사항", "결정요지", "전문",
               "참조조문", "심판대상조문")
# target -> (root element, body builder)
SERVICE_TARGETS: dict[str, tuple[str, str, Callable[[PlatformContext, Any], dict[str, Any] | None]]] = {
    "law": ("law", "법령", law_body),
    "eflaw": ("law", "법령", law_body),
    "prec": ("prec", "PrecService", lambda p, q: _case_body(p, q, "law_prec", PREC_FIELDS, {})),
    "detc": ("detc", "DetcService", lambda p, q: _case_body(p, q, "law_detc", DETC_FIELDS,
                                                              {"재판부구분코드": "430201", "참조판례": ""})),
}


def service(pctx: PlatformContext, request: Request) -> Response:
    q = request.query_params
    name = q.get("target") or ""
    if name not in SERVICE_TARGETS or pctx.is_removed(name):
        return not_routed()
    kind, root, build = SERVICE_TARGETS[name]
    body = build(pctx, q)
    fmt = _format(request)
    if fmt == "HTML":
        text = "일치하는 자료가 없습니다." if body is None else escape(json.dumps(to_json(body), ensure_ascii=False))
        return html_page("국가법령정보 공동활용", f"<div id='conScroll'>{text}</div>")
    if body is None:
        return render("Law", NO_MATCH[kind], fmt)
    return render(root, body, fmt)


def create_app(pctx: PlatformContext) -> Starlette:
    async def law_search(request: Request) -> Response:
        return _auth_error(pctx, request) or search(pctx, request)

    async def law_service(request: Request) -> Response:
        return _auth_error(pctx, request) or service(pctx, request)

    return Starlette(routes=[Route("/lawSearch.do", law_search, methods=["GET", "POST"]),
                             Route("/lawService.do", law_service, methods=["GET", "POST"])])


def fault_response(kind: FaultKind, request: Request) -> Response:
    """Rate limit → HTTP 429; server error → the web server's HTML 500 page; unavailable → the
    0-byte HTTP 200 body clients of this service meet when the backend drops the request."""
    if kind is FaultKind.RATE_LIMIT:
        return HTMLResponse("<html><head><title>429 Too Many Requests</title></head><body>"
                            "<h1>Too Many Requests</h1></body></html>", status_code=429)
    if kind is FaultKind.SERVER_ERROR:
        return HTMLResponse("<!doctype html><html lang=\"en\"><head><title>HTTP Status 500 – Internal Server Error"
                            "</title></head><body><h1>HTTP Status 500 – Internal Server Error</h1></body></html>",
                            status_code=500)
    return Response(b"", status_code=200, media_type="text/html;charset=UTF-8")
