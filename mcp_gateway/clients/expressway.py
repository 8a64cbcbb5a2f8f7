"""Korea Expressway (data.ex.co.kr/openapi): ``key``, ``type=json``, ``numOfRows``/``pageNo``.

    {"code":"SUCCESS","message":"인증키가 유효합니다.","count":226,"pageNo":1,"numOfRows":99,"pageSize":3,"list":[…]}

The rows sit under a key that differs per operation (``list``, ``trafficIc``,
``realUnitTrtmVO``…): ``Endpoint.list_key`` when the catalog names it, else the one list-valued
key. ``count`` may be a string. ``code: "ERROR"`` carries the verdict in its message (bad key,
quota). The servlet's exceptions arrive with HTTP 200, as HTML or, since the client sends
``Accept: application/json``, as ``{"exception":{"message":…}}``: a ``NumberFormatException``
("For input string") is a bad parameter value (SCHEMA_MISMATCH), anything else a server error.
Every request carries a User-Agent (the context's default): without one the portal answers
HTTP 400 "Request Blocked".
"""

from __future__ import annotations

from typing import Any

import httpx

from ..catalog.spec import Endpoint
from ..runtime.result import Outcome
from .base import PlatformClient
from .envelope import (
    Reading,
    as_records,
    failure,
    load_json,
    looks_like_json,
    records_at,
    success,
    to_int,
)

BAD_VALUE_MARK = "For input string"
BLOCKED = b"Request Blocked"
ERROR_MESSAGES = (("인증키", Outcome.AUTH_ERROR), ("트래픽", Outcome.RATE_LIMIT), ("허용량", Outcome.RATE_LIMIT))


def exception_reading(text: str) -> Reading:
    if BAD_VALUE_MARK in text:
        return failure(Outcome.SCHEMA_MISMATCH, "exception", "a parameter value has the wrong type (Java: "
                       f"{text[:200]})")
    return failure(Outcome.SERVER_ERROR, "exception", text[:200])


class ExpresswayClient(PlatformClient):
    family = "expressway"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"key": key, "type": "json"}
        if endpoint.upstream_paged:
            query |= {"numOfRows": str(page_size), "pageNo": str(page_no)}
        query |= self.query(endpoint, params)
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query,
                                           headers={"Accept": "application/json"})

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if response.status_code == 400 and BLOCKED in response.content:
            return failure(Outcome.AUTH_ERROR, "400", "request blocked by the portal (User-Agent refused)")
        if not looks_like_json(response):
            if response.status_code == 200 and b"<html" in response.content[:200].lower():
                return exception_reading(response.text)
            return None
        body = load_json(response)
        if not isinstance(body, dict):
            return None
        if "exception" in body:
            return exception_reading(str((body["exception"] or {}).get("message", "")))
        code, message = str(body.get("code", "")), str(body.get("message", ""))
        if code == "SUCCESS":
            rows = self._rows(endpoint, body)
            return None if rows is None else success(rows, to_int(body.get("count")), code, message)
        if code == "ERROR":
            outcome = next((o for mark, o in ERROR_MESSAGES if mark in message), Outcome.UNCATEGORIZED)
            return failure(outcome, code, message)
        return None

    @staticmethod
    def _rows(endpoint: Endpoint, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The rows under ``list_key``, or under the one list-valued key; None when that is ambiguous."""
        if endpoint.list_key:
            return records_at(body, endpoint.list_key, None)
        lists = [v for v in body.values() if isinstance(v, list)]
        if len(lists) > 1:
            return None
        return as_records(lists[0]) if lists else []
