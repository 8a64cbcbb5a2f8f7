"""Platform clients: one per envelope family, all behind one small interface.

    client = client_for(endpoint.family)(base_urls, transport=..., ...)
    page = await client.fetch(endpoint, params, page_no=1, page_size=10, key="...")

``fetch`` builds the real request (auth parameter where the platform puts it, paging in the
platform's own vocabulary), sends it through the given httpx transport, reads the envelope,
and returns an ``UpstreamPage`` whose ``outcome`` is already classified (Table 7). It never
raises for an upstream fault: rate limits, 5xx, timeouts, malformed bodies, auth rejections
all come back as outcomes. Retries with backoff and jitter for retryable outcomes happen in
``fetch`` too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..runtime.result import Outcome


@dataclass
class UpstreamPage:
    """One upstream answer, read and classified."""

    outcome: Outcome
    records: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    code: str | None = None  # the platform's own result code
    message: str | None = None  # the platform's own message, or what went wrong
    http_status: int | None = None
    attempts: int = 1
    url: str | None = None  # with every key redacted
