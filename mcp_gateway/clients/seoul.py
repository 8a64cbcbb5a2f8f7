"""Seoul Open Data Plaza: key, format, service and row window all in the URL path.

    {base}/{KEY}/json/{SERVICE}/{START_INDEX}/{END_INDEX}/{opt1}/{opt2}/…

The window is the inclusive 1-based row range of the requested page. Optional filters are
positional (``Endpoint.path_params`` gives their order); a skipped one in the middle is sent
as a blank segment, which the service treats as "no filter", and trailing blanks are dropped.
The answer's wrapper may differ from the service name (``bikeList`` → ``rentBikeStatus``),
so the reader takes the only top-level key; an invalid key answers XML even on ``/json/``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from ..catalog.spec import Endpoint
from .base import PlatformClient
from .envelope import Reading, load_json, looks_like_json, records_at, success, to_int
from .hub import OK, result_reading, xml_result


def _segment(value: str) -> str:
    """One path segment; a value of '.' or '..' is escaped, or URL normalisation would drop segments."""
    return quote(value, safe="") if value.strip(".") else value.replace(".", "%2E")


class SeoulClient(PlatformClient):
    family = "seoul"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        start, end = (page_no - 1) * page_size + 1, page_no * page_size
        optional = [str(params.get(name) or "").strip() for name in endpoint.path_params]
        while optional and not optional[-1]:
            optional.pop()
        segments = [key, "json", endpoint.path, str(start), str(end), *(v or " " for v in optional)]
        path = "/".join(_segment(s) for s in segments)
        return self.ctx.http.build_request("GET", f"{self.ctx.urls.base(endpoint.platform, endpoint.base)}/{path}")

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if not looks_like_json(response):
            return xml_result(response)
        body = load_json(response)
        if not isinstance(body, dict) or len(body) != 1:
            return None
        (name, value), = body.items()
        if not isinstance(value, dict):
            return None
        if name == "RESULT":
            return result_reading(str(value.get("CODE", "")), value.get("MESSAGE"))
        result = value.get("RESULT") or {}
        code = str(result.get("CODE", OK))
        if code != OK:
            return result_reading(code, result.get("MESSAGE"))
        return success(records_at(body, endpoint.list_key, value.get("row")), to_int(value.get("list_total_count")), code,
                       result.get("MESSAGE"))
