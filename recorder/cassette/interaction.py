"""One recorded exchange, with its provenance."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

RECORDER_VERSION = "kopa-recorder/0.1"


class Origin(StrEnum):
    """Where an interaction's bytes come from: recorded and other data never mix unmarked."""

    RECORDED = "recorded"  # an upstream answered this (live or sandbox)
    IMPORTED = "imported"  # read from a foreign cassette (vcrpy); recorded elsewhere, by other tools
    SYNTHETIC = "synthetic"  # made up (tests, fixtures), never an upstream's answer
    EDITED = "edited"  # recorded, then changed by hand


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Interaction:
    """A request as the recorder names it and the response it got (secrets already masked)."""

    fingerprint: str
    method: str
    url: str  # canonical: ``label:/path?query`` with secret values masked
    platform: str
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    query_fingerprint: str | None = None  # the same query at any page (None: the request does not page)
    page: int | None = None
    size: int | None = None
    tool: str | None = None
    request_body: bytes | None = None
    recorded_at: str = field(default_factory=utc_now)
    source: str = "live"  # "live", "sandbox@v1", "vcr:<file name>"
    recorder_version: str = RECORDER_VERSION
    origin: Origin = Origin.RECORDED
    duration_ms: float | None = None

    @property
    def label(self) -> str:
        """The base label of ``url`` (``dart``, ``edu.schoolinfo``)."""
        return self.url.split(":", 1)[0]

    @property
    def content_type(self) -> str:
        return next((v for k, v in self.headers if k.lower() == "content-type"), "")

    def headers_json(self) -> str:
        return json.dumps([list(h) for h in self.headers], ensure_ascii=False)

    def with_(self, **changes: Any) -> Interaction:
        return replace(self, **changes)
