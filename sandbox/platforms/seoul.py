"""Seoul Open Data Plaza (openapi.seoul.go.kr:8088): the key and the paging in the URL path.

    http://openapi.seoul.go.kr:8088/{KEY}/{TYPE}/{SERVICE}/{START_INDEX}/{END_INDEX}/{opt1}/{opt2}/...

Rows are an inclusive 1-based window of at most 1,000 (ERROR-336); optional filters are
positional segments after END_INDEX in the order the service declares them; the key
``sample`` sees rows 1-5 only (ERROR-335); a bad key answers INFO-100 **as XML even on
/json/**; no data (or a window past the end) answers a wrapper-less INFO-200.

Services are declared as ``SeoulService`` (``seoul_service.py``) and come from two places: the transport services
(``seoul_services.py``) and the uniform dataset services of the district long tail
(``datasets.seoul_dataset_services``).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from public_apis import platform_spec

from ..faults import FaultKind
from .base import MAX_INT, PlatformContext
from .datasets import seoul_dataset_services
from .hub import MESSAGES, json_response
from .seoul_service import SeoulService
from .seoul_services import transport_services
from .xmlio import XML_DECL, element

SPEC = platform_spec("seoul")

SAMPLE_KEY = "sample"
OK_MESSAGE = "정상 처리되었습니다"  # Seoul's INFO-000 text has no trailing period
MAX_WINDOW = 1000


def seoul_result(code: str, *, xml: bool) -> Response:
    message = OK_MESSAGE if code == "INFO-000" else MESSAGES.get(code, "")
    if xml:
        return Response(XML_DECL + element("RESULT", {"CODE": code, "MESSAGE": message}),
                        media_type="text/xml;charset=UTF-8")
    return json_response({"RESULT": {"CODE": code, "MESSAGE": message}})


def _row(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in row.items():
        if not k.startswith("_"):
            out[k] = "" if v is None else (f"{v:.10g}" if isinstance(v, float) else str(v))
    return out


def _services(pctx: PlatformContext) -> dict[str, SeoulService]:
    services = {s.name: s for s in transport_services(pctx.world)}
    for s in seoul_dataset_services(pctx.world):
        services.setdefault(s.name, s)
    return services


def create_app(pctx: PlatformContext) -> Starlette:
    services = _services(pctx)

    async def handle(request: Request) -> Response:
        return serve(pctx, services, request.path_params["rest"])

    return Starlette(routes=[Route("/{rest:path}", handle)])


def serve(pctx: PlatformContext, services: dict[str, SeoulService], rest: str) -> Response:
    parts = rest.split("/")
    while parts and parts[-1] == "":
        parts.pop()
    key = parts[0] if parts else ""
    fmt = parts[1].lower() if len(parts) > 1 else ""
    xml = fmt != "json"
    if key != SAMPLE_KEY and not pctx.key_ok(key):
        return seoul_result("INFO-100", xml=True)  # XML even when /json/ was asked
    if fmt not in ("json", "xml", "xmlf", "xls"):
        return seoul_result("ERROR-301", xml=True)
    if len(parts) < 3:
        return seoul_result("ERROR-310", xml=xml)
    svc = services.get(parts[2])
    if svc is None or pctx.is_removed(parts[2]):
        return seoul_result("ERROR-310", xml=xml)
    if len(parts) < 5:
        return seoul_result("ERROR-300", xml=xml)
    try:
        start, end = int(parts[3]), int(parts[4])
    except ValueError:
        return seoul_result("ERROR-333", xml=xml)
    if start > MAX_INT or end > MAX_INT:
        return seoul_result("ERROR-333", xml=xml)
    if start < 1:
        return seoul_result("ERROR-331", xml=xml)
    if end < 1:
        return seoul_result("ERROR-332", xml=xml)
    if start > end:
        return seoul_result("ERROR-334", xml=xml)
    if key == SAMPLE_KEY and end > 5:
        return seoul_result("ERROR-335", xml=xml)
    if end - start + 1 > MAX_WINDOW:
        return seoul_result("ERROR-336", xml=xml)
    optional = [p.strip() for p in parts[5:]]
    if len([o for o in optional[: svc.required] if o]) < svc.required:
        return seoul_result("ERROR-300", xml=xml)
    clauses, values = ([svc.where], list(svc.where_params)) if svc.where else ([], [])
    for (param, column), value in zip(svc.path_params, optional):
        if value:
            if param in svc.like_params:
                clauses.append(f'"{column}" LIKE ?')
                values.append(f"%{value}%")
            else:
                clauses.append(f'"{column}" = ?')
                values.append(value)
    total, rows = pctx.world.page(svc.table, " AND ".join(clauses), values, order_by=svc.order_by,
                                  offset=start - 1, limit=end - start + 1, columns=svc.columns)
    if not rows:
        return seoul_result("INFO-200", xml=xml)
    fmt_row = svc.format_row or _row
    out = [fmt_row(r) for r in rows]
    wrapper = svc.wrapper or svc.name
    result = {"CODE": "INFO-000", "MESSAGE": OK_MESSAGE}
    if xml:
        inner = element("list_total_count", total) + element("RESULT", result) + "".join(element("row", r) for r in out)
        return Response(f"{XML_DECL}<{wrapper}>{inner}</{wrapper}>", media_type="text/xml;charset=UTF-8")
    return json_response({wrapper: {"list_total_count": total, "RESULT": result, "row": out}})


def fault_response(kind: FaultKind, request: Request) -> Response:
    xml = "/json/" not in request.url.path
    if kind is FaultKind.RATE_LIMIT:
        return seoul_result("ERROR-337", xml=xml)
    if kind is FaultKind.SERVER_ERROR:
        return seoul_result("ERROR-500", xml=xml)
    # UNAVAILABLE: the 8088 front end answers with its own HTML error page.
    return HTMLResponse("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>", status_code=503)
