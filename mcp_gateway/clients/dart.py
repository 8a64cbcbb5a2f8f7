"""OpenDART: ``crtfc_key``, a ``status``/``message`` verdict in every body, and the corpCode ZIP.

* ``list.json`` pages upstream with ``page_no``/``page_count`` and reports ``total_count``;
  endpoints marked ``upstream_paged=False`` get no paging params, and list endpoints that
  ignore them (``cvbdIsDecsn``) return their whole result, which the base client pages;
  single-entity endpoints (``company.json``, ``list_key "$"``) put the record in the top-level
  fields next to ``status``/``message``, which are dropped from it.
* ``corpCode.xml`` is a ZIP holding ``CORPCODE.xml`` (every company) on success and a small
  ``<result><status>`` XML document on failure. Filtering by ``corp_name`` is the catalog's
  ``local_filters`` (applied by the base client). The parsed list is kept for the last ZIP
  seen (the file is ~100k entries live; identical bytes are not parsed twice).
"""

from __future__ import annotations

import hashlib
import io
import xml.etree.ElementTree as ET
import zipfile
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

STATUS: dict[str, Outcome] = {
    "010": Outcome.AUTH_ERROR, "011": Outcome.AUTH_ERROR, "012": Outcome.AUTH_ERROR, "901": Outcome.AUTH_ERROR,
    "020": Outcome.RATE_LIMIT, "021": Outcome.RATE_LIMIT,
    "100": Outcome.SCHEMA_MISMATCH, "101": Outcome.SCHEMA_MISMATCH,
    "800": Outcome.ENDPOINT_UNAVAILABLE, "900": Outcome.SERVER_ERROR,
}
OK, NO_DATA = "000", "013"
ENVELOPE_FIELDS = frozenset({"status", "message", "page_no", "page_count", "total_count", "total_page"})
CORPCODE_LIST_KEY = "result.list"  # CORPCODE.xml read as {"result": {"list": [...]}}


def read_body(body: Any, list_key: str | None) -> Reading | None:
    """A JSON (or XML-read) DART answer: the status verdict, then the records."""
    if not isinstance(body, dict) or "status" not in body:
        return None
    status, message = str(body["status"]), body.get("message")
    if status == NO_DATA:
        return success([], 0, status, message)
    if status != OK:
        return failure(STATUS.get(status, Outcome.UNCATEGORIZED), status, message)
    entity = {k: v for k, v in body.items() if k not in ENVELOPE_FIELDS}
    records = records_at(body, list_key, body.get("list", entity or None))
    if list_key == "$":  # the entity is the root: drop the envelope's own fields
        records = [{k: v for k, v in r.items() if k not in ENVELOPE_FIELDS} for r in records]
    return success(records, to_int(body.get("total_count")), status, message)


class DartClient(PlatformClient):
    family = "dart"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._corp_codes: tuple[str, dict[str, Any]] = ("", {})  # (sha256 of the last ZIP, its document)

    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        query = {"crtfc_key": key}
        if endpoint.upstream_paged:
            query |= {"page_no": str(page_no), "page_count": str(page_size)}
        query |= self.query(endpoint, params)
        return self.ctx.http.build_request("GET", self.ctx.urls.url(endpoint), params=query)

    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        if response.content[:2] == b"PK":
            document = self._corp_code_document(response.content)
            return success(records_at(document, endpoint.list_key or CORPCODE_LIST_KEY, None))
        if looks_like_json(response):
            return read_body(load_json(response), endpoint.list_key)
        root = xml_document(response)
        if root is None or root.tag != "result":
            return None
        body = xml_value(root)
        return read_body(body, None if endpoint.list_key is None else endpoint.list_key.removeprefix("result."))

    def _corp_code_document(self, content: bytes) -> dict[str, Any]:
        digest = hashlib.sha256(content).hexdigest()
        if self._corp_codes[0] != digest:
            try:
                with zipfile.ZipFile(io.BytesIO(content)) as zf:
                    root = ET.fromstring(zf.read("CORPCODE.xml"))
            except (zipfile.BadZipFile, KeyError, ET.ParseError) as exc:
                raise ValueError(f"corpCode.xml ZIP unreadable: {exc}") from None
            entries = [{c.tag: (c.text or "").strip() for c in row} for row in root.iter("list")]
            self._corp_codes = (digest, {root.tag: {"list": entries}})
        return self._corp_codes[1]
