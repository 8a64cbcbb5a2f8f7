"""국가법령정보센터 DRF: ``OC`` (the account id), ``type=JSON``, ``display``/``page``.

``lawSearch.do`` lists come under a Korean-named root per target (``LawSearch``,
``PrecSearch``, ``DetcSearch``) with ``totalCnt`` and the hits under the one list- or
object-valued key (one hit is an object; zero hits drop the key). ``lawService.do`` bodies
(``법령``, ``PrecService``, ``DetcService``) are one record each. Verdicts without a status
code: a failed account check answers ``{"result":"사용자 정보 검증에 실패하였습니다.",…}``;
no match is a one-key sentence (``{"Law":"일치하는 법령이 없습니다…"}``), a success with no
records; a 0-byte body means the backend dropped the request (endpoint unavailable).
The service echoes the OC into detail links; the base client redacts it from the records.
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

NO_MATCH_MARK = "일치하는"
AUTH_KEYS = frozenset({"result", "msg"})


def search_reading(body: dict[str, Any], root: dict[str, Any], list_key: str | None) -> Reading:
    hits = [v for v in root.values() if isinstance(v, (list, dict))]
    code = str(root.get("resultCode", "00"))
    if code != "00":
        return failure(Outcome.UNCATEGORIZED, code, root.get("resultMsg"))
    return success(records_at(body, list_key, hits[0] if hits else None), to_int(root.get("totalCnt")), code,
                   root.get("resultMsg"))


def read_json(body: Any, list_key: str | None) -> Reading | None:
    if not isinstance(body, dict) or not body:
        return None
    if set(body) <= AUTH_KEYS and "result" in body:
        return failure(Outcome.AUTH_ERROR, "auth", f"{body['result']} {body.get('msg', '')}".strip())
    if len(body) != 1:
        return None
    (value,) = body.values()
    if isinstance(value, str):
        if NO_MATCH_MARK in value:
            return success([], 0, "no-match", value)
        return failure(Outcome.UNCATEGORIZED, None, value)
    if not isinstance(value, dict):
        return None
    if "totalCnt" in value:
        return search_reading(body, value, list_key)
    return success(records_at(body, list_key, value))


class LawClient(PlatformClient):
    family = "law"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"OC": key, "type": "JSON"}
        if endpoint.upstream_paged:
            query |= {"display": str(page_size), "page": str(page_no)}
        query |= self.query(endpoint, params)
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query)

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if response.status_code == 200 and not response.content.strip():
            return failure(Outcome.ENDPOINT_UNAVAILABLE, "empty", "the service answered with an empty body")
        if looks_like_json(response):
            return read_json(load_json(response), endpoint.list_key)
        root = xml_document(response)
        if root is not None and root.tag == "Response" and root.findtext("result"):
            return read_json({"result": root.findtext("result"), "msg": root.findtext("msg") or ""}, None)
        return None
