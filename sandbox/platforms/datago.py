"""The data.go.kr gateway family: FSC stock prices (KRX data), KDIC and HRD Korea.

Three behaviours live here:

* the **gateway**, which checks ``serviceKey`` before any provider sees the request and
  rejects with ``OpenAPI_ServiceResponse/cmmMsgHeader`` — XML even when JSON was asked for
  (``GatewayStyle`` chooses the 2026 variants: JSON with HTTP 400/403, or plain text);
* the **standard provider envelope** ``response/header/body/items/item`` with
  ``resultCode "00"``, ``totalCount``, a single item serialised as an object and
  ``items: ""`` when nothing matched;
* the provider variants: KDIC's operation-named root and HRD's root without ``response``
  whose ``items`` is a plain list, chosen with ``Envelope``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .base import CIParams, PlatformContext, parse_positive_int
from .jsonio import compact
from .xmlio import XML_DECL, element

GATEWAY_CODES: dict[str, str] = {
    "01": "APPLICATION_ERROR",
    "04": "HTTP_ERROR",
    "05": "SERVICETIMEOUT_ERROR",
    "10": "INVALID_REQUEST_PARAMETER_ERROR",
    "11": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR",
    "12": "NO_OPENAPI_SERVICE_ERROR",
    "20": "SERVICE_ACCESS_DENIED_ERROR",
    "22": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR",
    "23": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR",
    "30": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
    "31": "DEADLINE_HAS_EXPIRED_ERROR",
    "99": "UNKNOWN_ERROR",
}


class GatewayStyle(StrEnum):
    """How the gateway renders a rejection (the portal has used all three)."""

    XML_200 = "xml-200"  # classic: XML body, HTTP 200, whatever format was asked
    JSON_4XX = "json-4xx"  # newer: same envelope as JSON, HTTP 400 (code 12) / 403 (code 30)
    TEXT = "text"  # bare "Unauthorized"-style text


class Envelope(StrEnum):
    STANDARD = "standard"  # {"response":{"header":..,"body":{..,"items":{"item":[..]}}}}
    OPERATION_ROOT = "operation-root"  # KDIC: {"<operation>":{"header":..,"item":[..],..}}
    NO_RESPONSE_ROOT = "no-response-root"  # HRD: {"header":..,"body":{"items":[..],..}}


def gateway_error(code: str, *, style: GatewayStyle = GatewayStyle.XML_200) -> Response:
    """A rejection by the gateway itself (auth, quota, unknown service)."""
    header = {"errMsg": "SERVICE ERROR", "returnAuthMsg": GATEWAY_CODES.get(code, "UNKNOWN_ERROR"),
              "returnReasonCode": code}
    if style is GatewayStyle.JSON_4XX:
        status = {"12": 400, "30": 403, "20": 403, "22": 429, "23": 429}.get(code, 400)
        body = json.dumps({"OpenAPI_ServiceResponse": {"cmmMsgHeader": header}}, ensure_ascii=False)
        return Response(body, status_code=status, media_type="application/json;charset=UTF-8")
    if style is GatewayStyle.TEXT:
        return PlainTextResponse("Unauthorized" if code in ("20", "30", "31") else header["returnAuthMsg"],
                                 status_code=401 if code in ("20", "30", "31") else 400)
    body = XML_DECL + element("OpenAPI_ServiceResponse", {"cmmMsgHeader": header})
    return Response(body, media_type="text/xml;charset=UTF-8")


@dataclass(frozen=True)
class DatagoService:
    """One provider operation behind the gateway, backed by one world table."""

    operation: str  # last path segment, e.g. "getStockPriceInfo"
    table: str
    order_by: str
    filters: Mapping[str, str] = field(default_factory=dict)  # param -> column, exact
    like_filters: Mapping[str, str] = field(default_factory=dict)  # param -> column, substring
    range_filters: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # param -> (column, ">=" | "<" | "<=")
    prefix_filters: Mapping[str, str] = field(default_factory=dict)  # param -> column, starts-with
    required: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None
    max_rows: int | None = None  # provider cap on numOfRows (HRD openQst: 50 → code 930)
    max_rows_code: str = "10"
    where: str = ""
    where_params: tuple[Any, ...] = ()
    format_row: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass(frozen=True)
class DatagoProvider:
    """A provider's conventions: format parameter name, envelope, 'OK' message."""

    format_param: str = "resultType"  # HRD uses dataFormat
    envelope: Envelope = Envelope.STANDARD
    ok_message: str = "NORMAL SERVICE."
    gateway_style: GatewayStyle = GatewayStyle.XML_200
    nodata_code: str = "00"  # FSC: "00" with totalCount 0; other providers: "03"


def _provider_error(provider: DatagoProvider, operation: str, code: str, message: str, xml: bool) -> Response:
    header = {"resultCode": code, "resultMsg": message}
    return _render(provider, operation, header, None, xml)


def serve_datago(pctx: PlatformContext, provider: DatagoProvider, svc: DatagoService,
                 request: Request) -> Response:
    """Gateway checks, then the provider's paged answer."""
    params = CIParams(request.query_params)
    key = params.get("serviceKey")
    if not key:
        return gateway_error("30", style=provider.gateway_style)
    if not pctx.key_ok(key):
        return gateway_error("30", style=provider.gateway_style)
    if pctx.is_removed(svc.operation):
        return gateway_error("12", style=provider.gateway_style)
    fmt = (params.get(provider.format_param) or "xml").lower()
    xml = fmt != "json"
    page_no = parse_positive_int(params.get("pageNo"), 1)
    num_rows = parse_positive_int(params.get("numOfRows"), 10)
    if page_no is None or num_rows is None:
        return _provider_error(provider, svc.operation, "10", "INVALID_REQUEST_PARAMETER_ERROR.", xml)
    if svc.max_rows is not None and num_rows > svc.max_rows:
        return _provider_error(provider, svc.operation, svc.max_rows_code,
                               f"numOfRows는 {svc.max_rows} 이하로 요청하십시오.", xml)
    for name in svc.required:
        if not params.get(name):
            return _provider_error(provider, svc.operation, "11", "NO_MANDATORY_REQUEST_PARAMETERS_ERROR.", xml)
    clauses, values = ([svc.where], list(svc.where_params)) if svc.where else ([], [])
    for param, column in svc.filters.items():
        if (v := params.get(param)):
            clauses.append(f'"{column}" = ?')
            values.append(v)
    for param, column in svc.like_filters.items():
        if (v := params.get(param)):
            clauses.append(f'"{column}" LIKE ?')
            values.append(f"%{v}%")
    for param, column in svc.prefix_filters.items():
        if (v := params.get(param)):
            clauses.append(f'"{column}" LIKE ?')
            values.append(f"{v}%")
    for param, (column, op) in svc.range_filters.items():
        if (v := params.get(param)):
            clauses.append(f'"{column}" {op} ?')
            values.append(v)
    total, rows = pctx.world.page(svc.table, " AND ".join(clauses), values, order_by=svc.order_by,
                                  offset=(page_no - 1) * num_rows, limit=num_rows, columns=svc.columns)
    fmt_row = svc.format_row or _string_row
    items = [fmt_row(r) for r in rows]
    if not items and provider.nodata_code != "00":
        return _provider_error(provider, svc.operation, provider.nodata_code, "NODATA_ERROR", xml)
    header = {"resultCode": "00", "resultMsg": provider.ok_message}
    body = {"numOfRows": num_rows, "pageNo": page_no, "totalCount": total}
    return _render(provider, svc.operation, header, (body, items), xml)


def _string_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in row.items():
        if k.startswith("_"):
            continue
        out[k] = "" if v is None else (f"{v:.10g}" if isinstance(v, float) else str(v))
    return out


def _render(provider: DatagoProvider, operation: str, header: dict[str, Any],
            page: tuple[dict[str, Any], list[dict[str, Any]]] | None, xml: bool) -> Response:
    if provider.envelope is Envelope.NO_RESPONSE_ROOT:
        if xml:
            body_xml = ""
            if page is not None:
                meta, items = page
                body_xml = element("body", {"items": None}) if not items else (
                    "<body><items>" + "".join(element("item", i) for i in items) + "</items>"
                    + "".join(element(k, v) for k, v in meta.items()) + "</body>")
            return _xml(f"<response>{element('header', header)}{body_xml}</response>")
        payload: dict[str, Any] = {"header": header}
        if page is not None:
            meta, items = page
            payload["body"] = {"items": items, **meta}
        return _json(payload)
    if provider.envelope is Envelope.OPERATION_ROOT:
        if xml:
            inner = element("header", header)
            if page is not None:
                meta, items = page
                inner += "".join(element(k, v) for k, v in meta.items()) + "".join(element("item", i) for i in items)
            return _xml(f"<{operation}>{inner}</{operation}>")
        root: dict[str, Any] = {"header": header}
        if page is not None:
            meta, items = page
            root.update(meta)
            root["item"] = items[0] if len(items) == 1 else items
        return _json({operation: root})
    # standard
    if xml:
        inner = element("header", header)
        if page is not None:
            meta, items = page
            items_xml = "<items/>" if not items else "<items>" + "".join(element("item", i) for i in items) + "</items>"
            inner += "<body>" + items_xml + "".join(element(k, v) for k, v in meta.items()) + "</body>"
        return _xml(f"<response>{inner}</response>")
    resp: dict[str, Any] = {"header": header}
    if page is not None:
        meta, items = page
        items_value: Any = "" if not items else {"item": items[0] if len(items) == 1 else items}
        resp["body"] = {**meta, "items": items_value}
    return _json({"response": resp})


def _json(payload: Any) -> Response:
    return Response(compact(payload), media_type="application/json;charset=UTF-8")


def _xml(body: str) -> Response:
    return Response(XML_DECL + body, media_type="text/xml;charset=UTF-8")
