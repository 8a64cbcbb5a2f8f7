"""학교알리미 disclosure API (www.schoolinfo.go.kr/openApi.do), the second base of ``edu``.

    /openApi.do?apiKey=…&apiType=62&pbanYr=2025&schulKndCode=02&sidoCode=11&sggCode=11350

One call returns every school of one kind in one 시·군·구 — there is no paging upstream — as
``{"resultCode":"success","resultMsg":…,"list":[…]}``; the base client cuts the requested page
out and reports the whole count. Failures are ``resultCode "fail"`` with only a message to go
by, matched against the service's wording (``FAIL_MESSAGES``, first match wins).
"""

from __future__ import annotations

from typing import Any

import httpx

from ..catalog.spec import Endpoint
from ..runtime.result import Outcome
from .base import PlatformClient
from .envelope import Reading, failure, load_json, looks_like_json, records_at, success

FAIL_MESSAGES = (("인증키", Outcome.AUTH_ERROR), ("필수", Outcome.MISSING_FIELD), ("트래픽", Outcome.RATE_LIMIT),
                 ("종료", Outcome.ENDPOINT_UNAVAILABLE), ("유효하지 않", Outcome.SCHEMA_MISMATCH))


class SchoolinfoClient(PlatformClient):
    family = "schoolinfo"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"apiKey": key, **self.query(endpoint, params)}
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query)

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if not looks_like_json(response):
            return None
        body = load_json(response)
        if not isinstance(body, dict) or "resultCode" not in body:
            return None
        code, message = str(body["resultCode"]), str(body.get("resultMsg", ""))
        if code == "success":
            records = records_at(body, endpoint.list_key, body.get("list"))
            return success(records, len(records), code, message)
        outcome = next((o for mark, o in FAIL_MESSAGES if mark in message), Outcome.UNCATEGORIZED)
        return failure(outcome, code, message)
