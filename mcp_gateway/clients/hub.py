"""The "hub" family: NEIS, the National Assembly and Gyeonggi (``KEY``/``Type``/``pIndex``/``pSize``).

    {"schoolInfo":[{"head":[{"list_total_count":1},{"RESULT":{"CODE":"INFO-000",…}}]},{"row":[…]}]}
    {"RESULT":{"CODE":"INFO-200","MESSAGE":"해당하는 데이터가 없습니다."}}

The wrapper is the service name, but the reader takes whatever single key the answer has;
the Assembly sends one row as an object. ``HUB_CODES`` is the vendor's code vocabulary,
shared with Seoul's path API.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..catalog.spec import Endpoint
from ..runtime.result import Outcome
from .base import PlatformClient
from .envelope import (
    Reading,
    failure,
    load_json,
    looks_like_json,
    records_at,
    success,
    to_int,
    xml_document,
)

_AUTH = ("INFO-100", "INFO-300", "ERROR-290")
_SCHEMA = ("ERROR-301", "ERROR-331", "ERROR-332", "ERROR-333", "ERROR-334", "ERROR-335", "ERROR-336")
_SERVER = ("ERROR-500", "ERROR-600", "ERROR-601")
HUB_CODES: dict[str, Outcome] = {
    **dict.fromkeys(_AUTH, Outcome.AUTH_ERROR), **dict.fromkeys(_SCHEMA, Outcome.SCHEMA_MISMATCH),
    **dict.fromkeys(_SERVER, Outcome.SERVER_ERROR),
    "ERROR-300": Outcome.MISSING_FIELD, "ERROR-310": Outcome.ENDPOINT_UNAVAILABLE, "ERROR-337": Outcome.RATE_LIMIT,
}
OK, NO_DATA = "INFO-000", "INFO-200"


def result_reading(code: str, message: str | None) -> Reading:
    """A wrapper-less ``RESULT`` answer: no data, or a classified error."""
    if code in (OK, NO_DATA):
        return success([], 0, code, message)
    return failure(HUB_CODES.get(code, Outcome.UNCATEGORIZED), code, message)


def xml_result(response: httpx.Response) -> Reading | None:
    """``<RESULT><CODE>…`` sent as XML (Seoul's INFO-100 even on /json/)."""
    root = xml_document(response)
    if root is None:
        return None
    node = root if root.tag == "RESULT" else root.find("RESULT")
    code = node.findtext("CODE") if node is not None else None
    return result_reading(code.strip(), (node.findtext("MESSAGE") or "").strip()) if code else None


class HubClient(PlatformClient):
    family = "hub"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"KEY": key, "Type": "json", "pIndex": str(page_no), "pSize": str(page_size),
                 **self.query(endpoint, params)}
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query)

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if not looks_like_json(response):
            return xml_result(response)
        body = load_json(response)
        if not isinstance(body, dict) or len(body) != 1:
            return None
        (name, value), = body.items()
        if name == "RESULT" and isinstance(value, dict):
            return result_reading(str(value.get("CODE", "")), value.get("MESSAGE"))
        if not isinstance(value, list):
            return None
        head: list[Any] = next((part["head"] for part in value if isinstance(part, dict) and "head" in part), [])
        rows = next((part["row"] for part in value if isinstance(part, dict) and "row" in part), None)
        total = next((to_int(h["list_total_count"]) for h in head if "list_total_count" in h), None)
        result = next((h["RESULT"] for h in head if "RESULT" in h), {})
        code = str(result.get("CODE", OK))
        if code != OK:
            return result_reading(code, result.get("MESSAGE"))
        return success(records_at(body, endpoint.list_key, rows), total, code, result.get("MESSAGE"))
