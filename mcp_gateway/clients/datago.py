"""The data.go.kr gateway family: FSC stock prices (krx), KDIC and HRD Korea.

Request: ``serviceKey`` (the raw "decoding" key; httpx URL-encodes its ``+/=`` once),
``pageNo``/``numOfRows``, and the provider's JSON switch — ``dataFormat=json`` for HRD,
``resultType=json`` for the others (``FORMAT_PARAM``).

Answers come in three provider envelopes and one gateway envelope:

* standard ``{"response":{"header":{resultCode…},"body":{totalCount…,"items":{"item":[…]}}}}``
  (one item as an object, ``items: ""`` when nothing matched);
* KDIC's operation root ``{"<operation>":{"header":…,"totalCount":…,"item":[…]}}``;
* HRD's root without ``response``: ``{"header":…,"body":{"items":[…],…}}``, and for a single
  paper ``body`` is the record itself;
* the gateway's own rejection ``OpenAPI_ServiceResponse/cmmMsgHeader/returnReasonCode`` as XML
  (even on a JSON request) or as JSON with HTTP 4xx.
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
    xml_value,
)

FORMAT_PARAM = {"hrdk": "dataFormat"}  # every other data.go.kr provider here takes resultType
GATEWAY_CODES: dict[str, Outcome] = {
    "01": Outcome.SERVER_ERROR, "04": Outcome.SERVER_ERROR, "05": Outcome.TIMEOUT,
    "10": Outcome.SCHEMA_MISMATCH, "11": Outcome.MISSING_FIELD, "12": Outcome.ENDPOINT_UNAVAILABLE,
    "20": Outcome.AUTH_ERROR, "22": Outcome.RATE_LIMIT, "23": Outcome.RATE_LIMIT, "30": Outcome.AUTH_ERROR,
    "31": Outcome.AUTH_ERROR, "32": Outcome.AUTH_ERROR, "99": Outcome.UNCATEGORIZED,
}
# Provider result codes: "00" ok, "03" no data; the rest reuse the gateway numbering, plus caps.
PROVIDER_CODES: dict[str, Outcome] = {**GATEWAY_CODES, "930": Outcome.SCHEMA_MISMATCH}
OK, NO_DATA = "00", "03"


def provider_reading(header: dict[str, Any], records: list[dict[str, Any]], total: int | None) -> Reading:
    code, message = str(header.get("resultCode", "")), header.get("resultMsg")
    if code == OK:
        return success(records, total, code, message)
    if code == NO_DATA:
        return success([], 0, code, message)
    return failure(PROVIDER_CODES.get(code, Outcome.UNCATEGORIZED), code, message)


def gateway_reading(header: dict[str, Any]) -> Reading:
    code = str(header.get("returnReasonCode", "")).strip()
    message = header.get("returnAuthMsg") or header.get("errMsg")
    return failure(GATEWAY_CODES.get(code, Outcome.UNCATEGORIZED), code, message)


def read_json(body: Any, list_key: str | None) -> Reading | None:
    if not isinstance(body, dict):
        return None
    if "OpenAPI_ServiceResponse" in body:
        return gateway_reading(body["OpenAPI_ServiceResponse"].get("cmmMsgHeader") or {})
    if "response" in body:  # standard
        resp = body["response"]
        page = resp.get("body") or {}
        items = page.get("items")
        default = items.get("item") if isinstance(items, dict) else items
        return provider_reading(resp.get("header") or {}, records_at(body, list_key, default),
                                to_int(page.get("totalCount")))
    if "header" in body:  # HRD: no response root; a single paper is the body itself
        page = body.get("body") or {}
        default = page.get("items", page or None)
        return provider_reading(body["header"], records_at(body, list_key, default), to_int(page.get("totalCount")))
    if len(body) == 1:  # KDIC: the operation name as root
        (root,) = body.values()
        if isinstance(root, dict) and "header" in root:
            return provider_reading(root["header"], records_at(body, list_key, root.get("item")),
                                    to_int(root.get("totalCount")))
    return None


def read_xml(response: httpx.Response) -> Reading | None:
    root = xml_document(response)
    if root is None:
        return None
    header = root.find("cmmMsgHeader")
    if root.tag == "OpenAPI_ServiceResponse" and header is not None:
        return gateway_reading(xml_value(header))
    provider_header = root.find("header")
    code = provider_header.findtext("resultCode") if provider_header is not None else None
    if provider_header is not None and code not in (None, OK):  # a provider error in XML although JSON was asked
        return provider_reading(xml_value(provider_header), [], None)
    return None


class DatagoClient(PlatformClient):
    family = "datago"

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"serviceKey": key, FORMAT_PARAM.get(endpoint.platform, "resultType"): "json",
                 "pageNo": str(page_no), "numOfRows": str(page_size), **self.query(endpoint, params)}
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query)

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if looks_like_json(response):
            return read_json(load_json(response), endpoint.list_key)
        return read_xml(response)
