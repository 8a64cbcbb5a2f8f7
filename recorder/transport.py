"""The recorder's httpx transport: ``live``, ``record``, ``replay`` and ``replay-or-record``.

    transport = RecorderTransport("replay", routes=Routes.sandbox("http://sandbox"),
                                  replay=store.open("kopa-bench"))
    httpx.AsyncClient(transport=transport)   # every platform client of the gateway sits on it

* ``live``: passes requests to the inner transport, records nothing.
* ``record``: passes them on and adds each exchange (secrets masked) to ``recording``.
* ``replay``: answers only from the bundle. Identical requests get their recorded answers in
  recorded order (the last one repeats once they run out). A request that was not recorded
  raises ``ReplayMiss``: its fingerprint, the nearest recorded requests, and the pages recorded
  for the same query, which let a client assemble any page from them (paging-independent
  replay; see ``mcp_gateway.clients.base``).
* ``replay-or-record``: replays what it has and records what it lacks.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

import httpx

from .cassette.bundle import Bundle
from .cassette.interaction import Interaction, Origin
from .capture import Capture
from .cassette.store import Recording
from .fingerprint import RequestKey, request_key
from .redaction import mask_echoed_keys, safe_headers
from .routes import Routes

TOOL_EXTENSION = "kopa_tool"  # request.extensions key naming the tool that made the request (provenance)
# response.extensions key on every replayed response: (bundle version, body offset, body length). The version is
# the SHA-256 of the bundle's parts and identical bodies share one span, so the stamp names the body's bytes for
# good: a reader may keep what it parsed from them (``mcp_gateway.clients.replay_cache``). Recorded and live
# responses carry no stamp.
REPLAY_BODY_EXTENSION = "kopa_replay_body"


class Mode(StrEnum):
    LIVE = "live"
    RECORD = "record"
    REPLAY = "replay"
    REPLAY_OR_RECORD = "replay-or-record"

    @property
    def replays(self) -> bool:
        return self in (Mode.REPLAY, Mode.REPLAY_OR_RECORD)

    @property
    def records(self) -> bool:
        return self in (Mode.RECORD, Mode.REPLAY_OR_RECORD)


class ReplayMiss(Exception):
    """A request the bundle holds no answer for, in strict replay."""

    def __init__(self, key: RequestKey, bundle: Bundle, nearest: list[str], pages: dict[int, dict[int, str]]):
        self.key, self.fingerprint, self.nearest, self.pages = key, key.fingerprint, nearest, pages
        self.bundle = f"{bundle.manifest.name}@{bundle.version}"
        near = "; ".join(nearest) if nearest else "none for this path"
        super().__init__(f"replay miss: {key.url} (fingerprint {key.fingerprint[:16]}) is not recorded in "
                         f"{self.bundle}; nearest recorded: {near}")


@dataclass
class ReplayStats:
    """What a replay run hit and missed (``kopa cassettes coverage --run``)."""

    hits: Counter[str] = field(default_factory=Counter)  # fingerprint → times served
    misses: dict[str, str] = field(default_factory=dict)  # fingerprint → canonical URL
    recorded: int = 0  # exchanges recorded in replay-or-record

    def as_json(self) -> dict[str, object]:
        return {"hits": dict(self.hits), "misses": self.misses, "recorded": self.recorded}


class RecorderTransport(httpx.AsyncBaseTransport):
    def __init__(self, mode: Mode | str, *, routes: Routes, inner: httpx.AsyncBaseTransport | None = None,
                 recording: Recording | Capture | None = None, replay: Bundle | None = None, source: str = "live"):
        self.mode = Mode(mode)
        if self.mode.replays and replay is None:
            raise ValueError(f"mode {self.mode} needs a bundle to replay from")
        if self.mode.records and recording is None:
            raise ValueError(f"mode {self.mode} needs a recording to add to")
        if self.mode is not Mode.REPLAY and inner is None:
            inner = httpx.AsyncHTTPTransport()
        self.routes, self.inner, self.recording, self.bundle, self.source = routes, inner, recording, replay, source
        self.stats = ReplayStats()
        self._lock = threading.Lock()
        self._spans: tuple[list[int], list[int]] | None = None  # body offset and length per row, read on first replay

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.mode is Mode.LIVE:
            assert self.inner is not None
            return await self.inner.handle_async_request(request)
        route, rel_path = self.routes.match(request.url)
        key = request_key(request, route, rel_path)
        if self.mode.replays:
            answer = self._replay(key, request)
            if answer is not None:
                return answer
        return await self._forward_and_record(key, request)

    def _replay(self, key: RequestKey, request: httpx.Request) -> httpx.Response | None:
        assert self.bundle is not None
        fingerprint = key.fingerprint
        rows = self.bundle.rows(fingerprint)
        if not rows:
            if self.mode is Mode.REPLAY:
                self.stats.misses[fingerprint] = key.url
                qfp = key.query_fingerprint
                raise ReplayMiss(key, self.bundle, self.nearest(key), self.bundle.pages(qfp) if qfp else {})
            return None
        with self._lock:
            served = self.stats.hits[fingerprint]  # answers already given for it: the next recorded one is due
            self.stats.hits[fingerprint] += 1
        row = rows[min(served, len(rows) - 1)]
        recorded = self.bundle.response(row)
        if self._spans is None:
            self._spans = (self.bundle.column("body_offset"), self.bundle.column("body_length"))
        stamp = (self.bundle.version, self._spans[0][row], self._spans[1][row])
        return httpx.Response(recorded.status, headers=recorded.headers, content=recorded.body, request=request,
                              extensions={"kopa_replayed": True, REPLAY_BODY_EXTENSION: stamp})

    async def _forward_and_record(self, key: RequestKey, request: httpx.Request) -> httpx.Response:
        assert self.inner is not None and self.recording is not None
        started = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        elapsed_ms = (time.perf_counter() - started) * 1000
        tool = request.extensions.get(TOOL_EXTENSION)
        self.recording.add(Interaction(
            fingerprint=key.fingerprint, method=key.method, url=key.url, platform=key.route.platform,
            status=response.status_code, body=mask_echoed_keys(body),
            headers=tuple(safe_headers(response.headers.multi_items())), query_fingerprint=key.query_fingerprint,
            page=key.page, size=key.size, tool=tool if isinstance(tool, str) else None,
            request_body=request.content or None, source=self.source, origin=Origin.RECORDED,
            duration_ms=round(elapsed_ms, 3)))
        with self._lock:
            self.stats.recorded += 1
        # The caller reads what was recorded (so record and replay read identical bytes).
        return httpx.Response(response.status_code, headers=safe_headers(response.headers.multi_items()),
                              content=mask_echoed_keys(body), request=request)

    def nearest(self, key: RequestKey, n: int = 3) -> list[str]:
        """Recorded requests to the same path, most similar first."""
        assert self.bundle is not None
        prefix = _endpoint_of(key.url)
        candidates = sorted({u for u in self.bundle.urls() if _endpoint_of(u) == prefix})
        return difflib.get_close_matches(key.url, candidates, n=n, cutoff=0.0)

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()


def _endpoint_of(url: str) -> str:
    """The endpoint part of a canonical URL: its path (for Seoul, up to the service name)."""
    path = url.split("?", 1)[0]
    return "/".join(path.split("/")[:4]) if path.startswith("seoul:") else path
