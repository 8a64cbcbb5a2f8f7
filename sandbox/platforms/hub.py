"""The "hub" envelope family: NEIS, the National Assembly and Gyeonggi (and Seoul's variant).

All four portals come from one vendor and share a vocabulary: ``KEY``/``Type``/``pIndex``/
``pSize`` query parameters (NEIS, Assembly, Gyeonggi), result codes ``INFO-000``/``INFO-200``/
``ERROR-xxx``, and a "no data" answer that drops the service wrapper entirely::

    {"schoolInfo":[{"head":[{"list_total_count":1},{"RESULT":{"CODE":"INFO-000",...}}]},{"row":[...]}]}
    {"RESULT":{"CODE":"INFO-200","MESSAGE":"해당하는 데이터가 없습니다."}}

A service is declared as a ``HubService`` (which table, which parameters filter which columns)
and served by ``serve_hub_service``; platform modules only declare services and quirks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .base import CIParams, PlatformContext, parse_positive_int, wants_xml
from .jsonio import compact
from .xmlio import XML_DECL, element

# Messages exactly as NEIS prints them (Seoul drops the trailing period of INFO-000).
MESSAGES: dict[str, str] = {
    "INFO-000": "정상 처리되었습니다.",
    "INFO-100": "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.",
    "INFO-200": "해당하는 데이터가 없습니다.",
    "INFO-300": "관리자에 의해 인증키 사용이 제한되었습니다.",
    "ERROR-290": "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오.",
    "ERROR-300": "필수 값이 누락되어 있습니다. 요청인자를 참고 하십시오.",
    "ERROR-301": "파일타입 값이 누락 혹은 유효하지 않습니다. 요청인자 중 TYPE을 확인하십시오.",
    "ERROR-310": "해당하는 서비스를 찾을 수 없습니다. 요청인자 중 SERVICE를 확인하십시오.",
    "ERROR-331": "요청시작위치 값을 확인하십시오.",
    "ERROR-332": "요청종료위치 값을 확인하십시오.",
    "ERROR-333": "요청위치 값의 타입이 유효하지 않습니다.요청위치 값은 정수를 입력하세요.",
    "ERROR-334": "요청종료위치 보다 요청시작위치가 더 큽니다.요청시작조회건수는 정수를 입력하세요.",
    "ERROR-335": "sample데이터(샘플키:sample) 는 한번에 최대 5건을 넘을 수 없습니다.요청시작위치와 요청종료위치 값은 1 ~ 5 사이만 가능합니다.",
    "ERROR-336": "데이터요청은 한번에 최대 1,000건을 넘을 수 없습니다.",
    "ERROR-337": "일별 트래픽 제한을 넘은 호출입니다. 오늘은 더이상 호출할 수 없습니다.",
    "ERROR-500": "서버 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다.",
    "ERROR-600": "데이터베이스 연결 오류입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다.",
    "ERROR-601": "SQL 문장 오류 입니다. 지속적으로 발생시 홈페이지로 문의(Q&A) 바랍니다.",
}

MAX_PAGE_SIZE = 1000
SAMPLE_ROWS = 5  # keyless / sample-key calls see at most this many rows


def value_str(value: Any) -> Any:
    """Portal style: every value is a string; missing values stay null."""
    if value.__class__ is str:  # most cells: checked first, they are millions per synthesis run
        return value
    if value is None:
        return None
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


@dataclass(frozen=True)
class HubService:
    """One list service of a hub-family portal, backed by one world table."""

    name: str
    table: str
    order_by: str
    filters: Mapping[str, str] = field(default_factory=dict)  # request param -> column, exact match
    like_filters: Mapping[str, str] = field(default_factory=dict)  # request param -> column, substring
    required: tuple[str, ...] = ()  # params that must be present (ERROR-300 otherwise)
    columns: tuple[str, ...] | None = None  # output fields in order; None = every non-underscore column
    single_row_as_object: bool = False  # Assembly quirk: one row comes back as an object
    where: str = ""  # fixed SQL condition (e.g. a dataset id of a shared table)
    where_params: tuple[Any, ...] = ()
    format_row: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def hub_result(code: str, *, xml: bool, message: str | None = None, status: int = 200) -> Response:
    """The wrapper-less answer used for no data and for every error."""
    msg = message if message is not None else MESSAGES.get(code, "")
    if xml:
        body = XML_DECL + element("RESULT", {"CODE": code, "MESSAGE": msg})
        return Response(body, status_code=status, media_type="text/xml;charset=UTF-8")
    return json_response({"RESULT": {"CODE": code, "MESSAGE": msg}}, status)


def json_response(payload: Any, status: int = 200) -> Response:
    body = compact(payload)
    return Response(body, status_code=status, media_type="application/json;charset=UTF-8")


def hub_success(service: str, total: int, rows: list[dict[str, Any]], *, xml: bool,
                single_row_as_object: bool = False) -> Response:
    result = {"CODE": "INFO-000", "MESSAGE": MESSAGES["INFO-000"]}
    if xml:
        inner = (element("head", {"list_total_count": total, "RESULT": result})
                 + "".join(element("row", r) for r in rows))
        return Response(f"{XML_DECL}<{service}>{inner}</{service}>", media_type="text/xml;charset=UTF-8")
    row_value: Any = rows[0] if single_row_as_object and len(rows) == 1 else rows
    payload = {service: [{"head": [{"list_total_count": total}, {"RESULT": result}]}, {"row": row_value}]}
    return json_response(payload)


@dataclass(frozen=True)
class HubAuth:
    """How a hub portal treats keys: keyless calls may fall back to a 5-row sample mode."""

    invalid_key_code: str = "ERROR-290"
    keyless_sample: bool = True


def serve_hub_service(pctx: PlatformContext, svc: HubService, request: Request,
                      auth: HubAuth = HubAuth()) -> Response:
    """Answer one hub-family list request: auth, paging rules, filters, envelope."""
    params = CIParams(request.query_params)
    xml = wants_xml(params.get("Type"), default_xml=True)
    fmt = params.get("Type")
    if fmt is not None and fmt.lower() not in ("json", "xml"):
        return hub_result("ERROR-301", xml=False)
    key = params.get("KEY")
    sample = False
    if key is None or key == "":
        if not auth.keyless_sample:
            return hub_result(auth.invalid_key_code, xml=xml)
        sample = True
    elif not pctx.key_ok(key):
        return hub_result(auth.invalid_key_code, xml=xml)
    if pctx.is_removed(svc.name):
        return hub_result("ERROR-310", xml=xml)
    p_index = parse_positive_int(params.get("pIndex"), 1)
    p_size = parse_positive_int(params.get("pSize"), 100)
    if p_index is None or p_size is None:
        return hub_result("ERROR-333", xml=xml)
    if p_size > MAX_PAGE_SIZE:
        return hub_result("ERROR-336", xml=xml)
    for name in svc.required:
        if not params.get(name):
            return hub_result("ERROR-300", xml=xml)
    if sample:
        p_index, p_size = 1, min(p_size, SAMPLE_ROWS)
    clauses, values = ([svc.where], list(svc.where_params)) if svc.where else ([], [])
    for param, column in svc.filters.items():
        value = params.get(param)
        if value:
            clauses.append(f'"{column}" = ?')
            values.append(value)
    for param, column in svc.like_filters.items():
        value = params.get(param)
        if value:
            clauses.append(f'"{column}" LIKE ?')
            values.append(f"%{value}%")
    total, rows = pctx.world.page(svc.table, " AND ".join(clauses), values, order_by=svc.order_by,
                                  offset=(p_index - 1) * p_size, limit=p_size, columns=svc.columns)
    if not rows:
        return hub_result("INFO-200", xml=xml)
    fmt_row = svc.format_row or default_row
    return hub_success(svc.name, total, [fmt_row(r) for r in rows], xml=xml,
                       single_row_as_object=svc.single_row_as_object)


def default_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: value_str(v) for k, v in row.items() if not k.startswith("_")}
