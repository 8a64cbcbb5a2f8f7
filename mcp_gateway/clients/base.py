"""Platform clients: one per envelope family, all behind one small interface.

    client = HubClient(ClientContext.create(PlatformURLs.sandbox(origin), transport=...))
    page = await client.fetch(endpoint, params, page_no=1, page_size=10, key="...")

``fetch`` builds the real request (auth parameter where the platform puts it, paging in the
platform's own vocabulary), sends it through the context's httpx client, reads the envelope,
and returns an ``UpstreamPage`` whose ``outcome`` is already classified (Table 7). It never
raises for an upstream fault: rate limits, 5xx, timeouts, malformed bodies, auth rejections
all come back as outcomes. Retries with exponential backoff and full jitter happen in
``fetch`` too, for retryable outcomes only.

Contract of ``params``: the tool's own (non-generic) inputs, keyed by their upstream names and
already validated by the runtime; the key and paging come as keywords. Hence success is
SEMANTIC_SUCCESS when any of ``params`` carried a value and GENERIC_SUCCESS otherwise
(``Endpoint.fixed`` values do not count: the model did not choose them).

Decisions the taxonomy leaves open:
* an undecodable body (truncated JSON, broken ZIP/XML) is SERVER_ERROR: it is environmental
  (a cut transfer, a crashed backend) and worth retrying, not the caller's fault;
* a body that decodes but has no shape the family knows is UNCATEGORIZED;
* a page larger than ``Endpoint.max_page_size`` is refused before sending (SCHEMA_MISMATCH,
  ``attempts == 0``) rather than silently shortened;
* ``Endpoint.local_filters`` params are not sent; the records read are filtered here instead
  (corp_name on the corpCode.xml ZIP); meant for endpoints that answer everything at once;
* when an upstream hands back its whole result (``Endpoint.upstream_paged`` False, as
  학교알리미 or corpCode.xml; or more records than asked, as ``restOilList`` which ignores
  paging), the requested page is cut out here and the total is the number of (filtered) records.

A replayed body is read once per bundle version (``replay_cache``: the context's ``readings``);
the readings it serves are shared, so the records a page returns are copies.
"""

from __future__ import annotations

import asyncio
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import httpx

from recorder import RecorderTransport, ReplayMiss
from recorder.redaction import redact_values, secret_forms
from recorder.transport import REPLAY_BODY_EXTENSION, TOOL_EXTENSION

from ..catalog.spec import Endpoint
from ..runtime.result import Outcome
from .config import Limits, PlatformURLs
from .envelope import Reading, failure, status_reading
from .replay_cache import SHARED, CachedReading, ReadingCache
from .secrets import SecretStore, guard_http_logs
from .throttle import PlatformGates

RECORD_MAX_RECORDS = 250_000  # a recorded query's whole result is fetched up to this many records
USER_AGENT = "kopa-gateway/0.1"  # data.ex.co.kr blocks requests without one (HTTP 400 "Request Blocked")


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
    # A replayed page read straight from one cached reading: what the page is a function of (the reading's key,
    # which names the recorded bytes for good, and the page asked for), with no key or secret in it. None for a
    # live or recorded answer, one assembled from recorded pages, or a failure before any answer.
    replay_key: tuple[Any, ...] | None = None


@dataclass
class ClientContext:
    """What every family client shares: base URLs, one httpx client, limits, gates, jitter, secrets."""

    urls: PlatformURLs
    http: httpx.AsyncClient
    limits: Limits = field(default_factory=Limits)
    rng: random.Random = field(default_factory=lambda: random.Random(0))  # jitter; seeded for repeatable runs
    secrets: SecretStore | None = None
    recorder: RecorderTransport | None = None  # set when requests go through the recorder's transport
    readings: ReadingCache | None = field(default_factory=lambda: SHARED)  # replayed bodies' readings; None: none kept
    gates: PlatformGates = field(init=False)

    def __post_init__(self) -> None:
        self.gates = PlatformGates(self.limits)

    @classmethod
    def create(cls, urls: PlatformURLs, *, transport: httpx.AsyncBaseTransport | None = None,
               limits: Limits | None = None, rng: random.Random | None = None,
               secrets: SecretStore | None = None) -> ClientContext:
        limits = limits or Limits()
        if secrets is not None:
            guard_http_logs(secrets)  # httpx logs each request URL, keys and all
        http = httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(limits.timeout_s),
                                 headers={"User-Agent": USER_AGENT}, follow_redirects=False)
        recorder = transport if isinstance(transport, RecorderTransport) else None
        return cls(urls, http, limits, rng or random.Random(0), secrets, recorder)

    def redact(self, text: str, key: str) -> str:
        text = redact_values(text, [key])
        return self.secrets.redact(text) if self.secrets else text

    async def aclose(self) -> None:
        await self.http.aclose()


class PlatformClient(ABC):
    """Send, classify, retry: the family subclasses only build requests and read bodies."""

    family: ClassVar[str]

    def __init__(self, ctx: ClientContext):
        self.ctx = ctx

    @abstractmethod
    def build(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
              key: str) -> httpx.Request:
        """The platform's request for one page."""

    @abstractmethod
    def read(self, endpoint: Endpoint, response: httpx.Response) -> Reading | None:
        """The family's reading of a response; None when the body is no shape it knows.

        Raise ``ValueError`` when the body cannot be decoded at all."""

    def query(self, endpoint: Endpoint, params: dict[str, Any]) -> dict[str, str]:
        """Fixed upstream params plus the caller's non-empty ones, as strings."""
        out = dict(endpoint.fixed)
        out.update({k: str(v) for k, v in params.items() if v is not None and v != ""})
        return out

    async def fetch(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int, page_size: int,
                    key: str, tool: str | None = None) -> UpstreamPage:
        if page_no < 1 or not 1 <= page_size <= endpoint.max_page_size:
            return UpstreamPage(Outcome.SCHEMA_MISMATCH, attempts=0, message=(
                f"pageNo must be ≥ 1 and numOfRows between 1 and {endpoint.max_page_size} for this tool "
                f"(got pageNo={page_no}, numOfRows={page_size})"))
        sent = {k: v for k, v in params.items() if k not in endpoint.local_filters}
        try:
            request = self._request(endpoint, sent, page_no, page_size, key, tool)
        except httpx.InvalidURL as exc:  # e.g. "URL too long": arguments the runtime's limits let through
            return UpstreamPage(Outcome.SCHEMA_MISMATCH, attempts=0, message=(
                f"the arguments make a request the HTTP client refuses ({exc}); send shorter values"))
        try:
            reading, response, attempts = await self._send(endpoint, request)
        except ReplayMiss as miss:
            used: list[httpx.Response | None] = []
            page = await self._from_recorded_pages(endpoint, params, sent, page_no, page_size, key, tool, miss, used)
            if used and all(isinstance(r, httpx.Response) for r in used):  # the readings it was made of, in order
                keys = [self._page_key(endpoint, r, params, page_no, page_size) for r in used]  # type: ignore[arg-type]
                if all(k is not None for k in keys) and self.ctx.readings is not None:
                    page.replay_key = ("pages", tuple(k[0] for k in keys), *keys[0][1:])  # type: ignore[index]
            return page
        if reading.failure is None:
            if self._records_whole_results(endpoint, reading, page_no):
                await self._record_whole_result(endpoint, sent, key, tool, reading.total or 0, (page_no, page_size))
            reading = self._paged(endpoint, params, reading, page_no, page_size)
        page = self._page(reading, response, params, key, attempts, str(request.url))
        if isinstance(reading, CachedReading) and response is not None:
            page.replay_key = self._page_key(endpoint, response, params, page_no, page_size)
        return page

    def _page_key(self, endpoint: Endpoint, response: httpx.Response, params: dict[str, Any], page_no: int,
                  page_size: int) -> tuple[Any, ...] | None:
        """What a page made of a replayed response is a function of (besides this context's key and secrets, which
        stay out of it): the reading, the params (typed: 1, 1.0 and True differ as filter values), the page."""
        stamp = response.extensions.get(REPLAY_BODY_EXTENSION)
        if stamp is None:
            return None
        try:
            typed = tuple(sorted((k, type(v).__name__, v) for k, v in params.items()))
            hash(typed)
        except TypeError:  # an unhashable value: not cached
            return None
        return self.reading_key(endpoint, response, stamp), typed, page_no, page_size

    def _request(self, endpoint: Endpoint, sent: dict[str, Any], page_no: int, page_size: int, key: str,
                 tool: str | None) -> httpx.Request:
        request = self.build(endpoint, sent, page_no=page_no, page_size=page_size, key=key)
        if tool:
            request.extensions[TOOL_EXTENSION] = tool  # provenance for the recorder
        return request

    async def _send(self, endpoint: Endpoint, request: httpx.Request) -> tuple[Reading, httpx.Response | None, int]:
        """One request, retried with backoff and full jitter while its outcome is retryable."""
        limits = self.ctx.limits
        attempt = 0
        while True:
            attempt += 1
            reading, response = await self._once(endpoint, request)
            if reading.failure is None or not reading.failure.retryable or attempt >= limits.max_attempts:
                return reading, response, attempt
            ceiling = min(limits.max_delay_s, limits.base_delay_s * 2 ** (attempt - 1))
            await asyncio.sleep(self.ctx.rng.uniform(0, ceiling))  # full jitter

    # ---- cassettes: whole results when recording, any page when replaying -------------------

    def _records_whole_results(self, endpoint: Endpoint, reading: Reading, page_no: int) -> bool:
        recorder = self.ctx.recorder
        return (recorder is not None and recorder.mode.records and endpoint.upstream_paged
                and reading.total is not None)

    async def _record_whole_result(self, endpoint: Endpoint, sent: dict[str, Any], key: str, tool: str | None,
                                   total: int, asked: tuple[int, int]) -> None:
        """Fetch (and so record) every page of the query at the largest page size, for paging-free replay,
        and the page just past the end: what the upstream answers there is replayed for any page past it."""
        size = endpoint.max_page_size
        last = -(-min(total, RECORD_MAX_RECORDS) // size)
        for page in range(1, last + 1 + (total <= RECORD_MAX_RECORDS)):
            if (page, size) != asked:
                reading, _, _ = await self._send(endpoint, self._request(endpoint, sent, page, size, key, tool))
                if reading.failure is not None:
                    break  # recorded as it came; replay of the pages after it will miss

    async def _from_recorded_pages(self, endpoint: Endpoint, params: dict[str, Any], sent: dict[str, Any],
                                   page_no: int, page_size: int, key: str, tool: str | None,
                                   miss: ReplayMiss, used: list[httpx.Response | None]) -> UpstreamPage:
        """Serve a page that was not recorded as such from recorded pages of the same query (``used``: each
        response it read, in order)."""
        start, end = (page_no - 1) * page_size, page_no * page_size
        url = self.ctx.redact(str(self._request(endpoint, sent, page_no, page_size, key, tool).url), key)
        for size in sorted(miss.pages, reverse=True):  # largest pages first: fewest lookups
            have = miss.pages[size]
            first = start // size + 1 if start // size + 1 in have else 1
            if first not in have:
                continue
            reading, response = await self._replayed(endpoint, sent, first, size, key, tool, used)
            if reading.failure is not None:
                return self._page(reading, response, params, key, 1, url)
            total = len(reading.records) if reading.total is None else reading.total
            if start >= total:  # past the end: the upstream's own answer there, when recorded
                past = -(-total // size) + 1
                if past in have:
                    reading, response = await self._replayed(endpoint, sent, past, size, key, tool, used)
                    return self._page(reading, response, params, key, 1, url)
                return self._page(replace(reading, records=[], total=total), None, params, key, 1, url)
            if len(reading.records) >= total:  # one answer holds the whole result (or paging was ignored)
                return self._page(replace(reading, records=reading.records[start:end]), None, params, key, 1, url)
            pages = range(start // size + 1, (min(end, total) - 1) // size + 2)
            if any(p not in have for p in pages):
                continue
            records: list[dict[str, Any]] = []
            for p in pages:
                part = reading
                if p != first:
                    part, response = await self._replayed(endpoint, sent, p, size, key, tool, used)
                    if part.failure is not None:
                        return self._page(part, response, params, key, 1, url)
                records.extend(part.records)
            offset = (pages[0] - 1) * size
            return self._page(replace(reading, records=records[start - offset:end - offset], total=total), None,
                              params, key, 1, url)
        return UpstreamPage(Outcome.REPLAY_MISS, message=str(miss), attempts=1, url=url)

    async def _replayed(self, endpoint: Endpoint, sent: dict[str, Any], page: int, size: int, key: str,
                        tool: str | None, used: list[httpx.Response | None]) -> tuple[Reading, httpx.Response | None]:
        reading, response = await self._once(endpoint, self._request(endpoint, sent, page, size, key, tool))
        used.append(response if isinstance(reading, CachedReading) else None)  # only a cached reading is keyed
        return reading, response

    @staticmethod
    def _paged(endpoint: Endpoint, params: dict[str, Any], reading: Reading, page_no: int,
               page_size: int) -> Reading:
        """Apply local filters, and cut the page out of a whole result (unpaged upstream, or paging ignored)."""
        if isinstance(reading, CachedReading):
            records = reading.filtered(params, endpoint.local_filters)
        else:
            records = filter_records(reading.records, params, endpoint.local_filters)
        if endpoint.upstream_paged and len(records) <= page_size:
            return replace(reading, records=records, total=len(records) if reading.total is None else reading.total)
        return replace(reading, records=records[(page_no - 1) * page_size: page_no * page_size], total=len(records))

    async def _once(self, endpoint: Endpoint, request: httpx.Request) -> tuple[Reading, httpx.Response | None]:
        timeout = self.ctx.limits.timeout_s
        async with self.ctx.gates.slot(endpoint.platform):
            try:
                # asyncio.timeout as well as httpx's: in-process transports (ASGI) ignore httpx timeouts.
                async with asyncio.timeout(timeout):
                    response = await self.ctx.http.send(request)
            except (TimeoutError, httpx.TimeoutException):
                return failure(Outcome.TIMEOUT, message=f"no answer within {timeout:g} s"), None
            except httpx.TransportError as exc:
                return failure(Outcome.ENDPOINT_UNAVAILABLE, message=f"connection failed ({type(exc).__name__})"), None
        stamp = response.extensions.get(REPLAY_BODY_EXTENSION)
        if stamp is None or self.ctx.readings is None:  # live or recorded (or no cache): read every time
            return self._classify(endpoint, response), response
        return self.read_replayed(endpoint, response, stamp), response

    def reading_key(self, endpoint: Endpoint, response: httpx.Response, stamp: tuple[str, int, int]) -> tuple[Any, ...]:
        """What a replayed body's reading depends on: the body's bytes for good (``stamp``: bundle version, offset,
        length), the status, the content type, this family and the endpoint fields a reader looks at."""
        return (stamp, response.status_code, response.headers.get("content-type"), self.family, endpoint.platform,
                endpoint.base, endpoint.path, endpoint.path_params, endpoint.list_key, endpoint.upstream_paged)

    def read_replayed(self, endpoint: Endpoint, response: httpx.Response, stamp: tuple[str, int, int]) -> Reading:
        """The reading of a replayed response, from the context's cache (read and kept on a miss)."""
        assert self.ctx.readings is not None
        return self.ctx.readings.get_or_read(self.reading_key(endpoint, response, stamp),
                                             lambda: self._classify(endpoint, response))

    def _classify(self, endpoint: Endpoint, response: httpx.Response) -> Reading:
        undecodable: ValueError | None = None
        try:
            reading = self.read(endpoint, response)
        except ValueError as exc:  # json/xml/zip/unicode decode errors all derive from ValueError here
            reading, undecodable = None, exc
        except (KeyError, TypeError, AttributeError) as exc:  # decoded, but bent out of every known shape
            return failure(Outcome.UNCATEGORIZED, str(response.status_code),
                           f"unrecognized upstream answer ({type(exc).__name__}: {exc})"[:300])
        if reading is not None:
            return reading
        by_status = status_reading(response)
        if by_status is not None:
            return by_status
        if undecodable is not None:
            return failure(Outcome.SERVER_ERROR, str(response.status_code),
                           f"malformed upstream body ({type(undecodable).__name__}: {undecodable})"[:300])
        return failure(Outcome.UNCATEGORIZED, str(response.status_code), "unrecognized upstream answer")

    def _page(self, reading: Reading, response: httpx.Response | None, params: dict[str, Any], key: str,
              attempts: int, url: str) -> UpstreamPage:
        records = reading.records
        if isinstance(reading, CachedReading):  # shared with later replays: the caller gets its own records
            records = [dict(r) for r in records]
        if reading.failure is None:
            outcome = (Outcome.SEMANTIC_SUCCESS if any(v is not None and v != "" for v in params.values())
                       else Outcome.GENERIC_SUCCESS)
        else:
            outcome = reading.failure
        if response is not None and any(f.encode() in response.content for f in secret_forms(key)):
            records = [scrub(r, lambda s: self.ctx.redact(s, key)) for r in records]  # e.g. law links echo OC
        message = self.ctx.redact(reading.message, key) if reading.message else None
        return UpstreamPage(outcome, records, reading.total, reading.code, message,
                            response.status_code if response is not None else None, attempts,
                            self.ctx.redact(url, key))


def filter_records(records: Sequence[dict[str, Any]], params: Mapping[str, Any],
                   filters: Mapping[str, str]) -> list[dict[str, Any]]:
    """The records passing the endpoint's local filters ("exact", or "like": case-insensitive substring), in their
    order; a filter whose parameter has no value is not applied."""
    # each wanted value is normalised once, not once per record: an unpaged upstream returns thousands
    active = [(name, how == "like", str(wanted).casefold() if how == "like" else str(wanted))
              for name, how in filters.items() if (wanted := params.get(name)) is not None and wanted != ""]
    if not active:
        return list(records)
    kept = []
    for record in records:
        for name, like, wanted in active:
            have = "" if record.get(name) is None else str(record[name])
            if not (wanted in have.casefold() if like else have == wanted):
                break
        else:
            kept.append(record)
    return kept


def scrub(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with ``redact`` applied to every string inside it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: scrub(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, redact) for v in value]
    return value

