"""Reading upstream bodies: the shared vocabulary of every family parser.

A family parser turns one HTTP response into a ``Reading``: success (records, total, code)
or a classified failure. Parsers raise ``ValueError`` (or a subclass) when the body cannot be
decoded at all, and return ``None`` when it decodes but is no shape they know; the client then
falls back to ``status_reading`` (HTTP status) and finally to the malformed/unrecognized rule
in ``base``.

The portals bend shapes freely — one record as an object instead of a list, empty lists as
``""``, totals as strings, errors as XML on a JSON request — so the helpers here normalise
those once: ``as_records``, ``to_int``, ``xml_document``. The catalog may say where an
endpoint's records sit (``Endpoint.list_key``, a dot path from the JSON root, XML read as the
same nesting); ``records_at`` honours it and otherwise takes the family's default place.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..runtime.result import Outcome

Record = dict[str, Any]


@dataclass
class Reading:
    """What one response said: ``failure`` is None on success."""

    failure: Outcome | None = None
    records: list[Record] = field(default_factory=list)
    total: int | None = None
    code: str | None = None
    message: str | None = None


def success(records: list[Record], total: int | None = None, code: str | None = None,
            message: str | None = None) -> Reading:
    return Reading(None, records, total, code, message)


def failure(outcome: Outcome, code: str | None = None, message: str | None = None) -> Reading:
    return Reading(outcome, [], None, code, message)


def load_json(response: httpx.Response) -> Any:
    """The body as JSON; ``ValueError`` when it is not JSON (or not UTF-8)."""
    return json.loads(response.content.decode("utf-8"))


def looks_like_json(response: httpx.Response) -> bool:
    return response.content.lstrip()[:1] in (b"{", b"[")


def xml_document(response: httpx.Response) -> ET.Element | None:
    """The root element of an XML body; None for a body that is not XML (HTML pages included)."""
    head = response.content.lstrip()[:100].lower()
    if not head.startswith(b"<") or head.startswith((b"<!doctype html", b"<html")):
        return None
    try:
        return ET.fromstring(response.content)
    except ET.ParseError as exc:
        raise ValueError(f"malformed XML body: {exc}") from None


def xml_value(element: ET.Element) -> Any:
    """An element as JSON-like data: text for a leaf, else a dict of children (repeated tags → list)."""
    if not len(element):
        return (element.text or "").strip()
    out: dict[str, Any] = {}
    for child in element:
        value = xml_value(child)
        if child.tag not in out:
            out[child.tag] = value
        elif isinstance(out[child.tag], list):
            out[child.tag].append(value)
        else:
            out[child.tag] = [out[child.tag], value]
    return out


def as_records(value: Any) -> list[Record]:
    """The portals' list field in any of its shapes: list, single object, "" or missing."""
    if value is None or value == "":
        return []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    raise ValueError(f"expected a record list, got {type(value).__name__}")


def at_path(body: Any, path: str) -> Any:
    """The value at a dot path from the root (``LawSearch.law``); ``$`` is the root; None when absent."""
    if path == "$":
        return body
    value = body
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def records_at(body: Any, list_key: str | None, default: Any) -> list[Record]:
    """Records at the catalog's ``Endpoint.list_key`` when it names one, else at the family's default place."""
    return as_records(default if list_key is None else at_path(body, list_key))


def to_int(value: Any) -> int | None:
    """A count printed as a number or as a string (``226``, ``"203"``, ``"1,024"``)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).replace(",", "").strip())
    except ValueError:
        return None


def status_reading(response: httpx.Response) -> Reading | None:
    """Classify by HTTP status alone (for bodies no parser recognised); None for a 2xx status."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    code = str(status)
    if status == 429:
        return failure(Outcome.RATE_LIMIT, code, "HTTP 429: too many requests")
    if status in (401, 403):
        return failure(Outcome.AUTH_ERROR, code, f"HTTP {status}: access refused")
    if status in (404, 410, 503):
        return failure(Outcome.ENDPOINT_UNAVAILABLE, code, f"HTTP {status}: endpoint unavailable")
    if status == 504:
        return failure(Outcome.TIMEOUT, code, "HTTP 504: the upstream timed out")
    if status >= 500:
        return failure(Outcome.SERVER_ERROR, code, f"HTTP {status}: upstream server error")
    return failure(Outcome.SCHEMA_MISMATCH, code, f"HTTP {status}: request rejected")
