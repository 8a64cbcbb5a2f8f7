"""Re-sending a seeded sample of a bundle's queries to the current upstream (``kopa drift --live-sample``)."""

from __future__ import annotations

import asyncio
import math
import random
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pyarrow.parquet as pq

from ..cassette.bundle import INDEX, Bundle
from ..cassette.interaction import Interaction
from ..cassette.store import BundleRef, CassetteStore
from ..fingerprint import MASK, SEOUL, is_secret_param
from ..routes import Routes
from ..transport import TOOL_EXTENSION, RecorderTransport
from .compare import compare
from .queries import page_url, queries
from .report import DriftReport, Reader, status_reader


@dataclass
class LiveSample:
    """A sample of a bundle's queries re-sent to the current upstream."""

    bundle: str  # "name@version" sampled
    original: list[Interaction]  # the sampled queries as recorded (every page)
    interactions: list[Interaction]  # as the upstream answers now
    errors: list[dict[str, Any]] = field(default_factory=list)  # queries that could not be re-sent
    ref: BundleRef | None = None  # where the new answers were committed, when a store was given

    def __iter__(self):
        return iter(self.interactions)

    def report(self, reader: Reader = status_reader) -> DriftReport:
        report = compare(self.original, self.interactions, reader, old_label=self.bundle,
                         new_label=f"live sample of {len(queries(self.original))} queries")
        report.notes += [{**e, "note": f"not re-sent: {e['error']}"} for e in self.errors]
        report.sort()
        return report


async def live_sample(bundle: Bundle, n: int, seed: int, transport: httpx.AsyncBaseTransport, routes: Routes,
                      keys: Mapping[str, str], *, reader: Reader | None = None, store: CassetteStore | None = None,
                      name: str | None = None, source: str = "live", timeout_s: float = 60.0,
                      max_pages: int = 250) -> LiveSample:
    """Re-send ``n`` of ``bundle``'s queries (chosen by ``seed``) through ``transport`` and record the answers.

    Requests are rebuilt from the canonical URLs on ``routes``' base URLs, the masked keys
    filled in from ``keys`` (platform → key). A paged query is re-sent page by page; with a
    ``reader``, pages its result has grown by are fetched too. The new interactions come
    back in memory, and are committed as a version of ``name`` when ``store`` is given."""
    if n < 1:
        raise ValueError(f"a live sample needs at least one query (n={n})")
    found = queries(bundle)
    chosen = random.Random(seed).sample(sorted(found, key=lambda q: (found[q].url, q)), min(n, len(found)))
    bodies = pq.read_table(bundle.folder / INDEX, columns=["fingerprint", "request_body"]).to_pydict()
    request_body = dict(zip(bodies["fingerprint"], bodies["request_body"]))
    with tempfile.TemporaryDirectory(prefix="kopa-live-sample-") as tmp:
        recording = (store or CassetteStore(tmp)).recording(
            name or f"{bundle.manifest.name}-live", inherit=False, keys=keys,
            note=f"live sample of {bundle.manifest.name}@{bundle.version} (n={n}, seed={seed})")
        recorder = RecorderTransport("record", routes=routes, inner=transport, recording=recording, source=source)
        original: list[Interaction] = []
        errors: list[dict[str, Any]] = []
        for qid in sorted(chosen, key=lambda q: found[q].url):
            query = found[qid]
            sent = [row.load() for row in query.rows]
            try:
                await _resend(recorder, sent, request_body, routes, keys, reader, timeout_s, max_pages)
            except (httpx.HTTPError, TimeoutError) as exc:
                errors.append({**query.describe(), "error": f"{type(exc).__name__}: {exc}"})
                continue
            original += sent
        ref = recording.commit() if store is not None and len(recording) else None
        return LiveSample(f"{bundle.manifest.name}@{bundle.version}", original, recording.interactions, errors, ref)


async def _resend(recorder: RecorderTransport, pages: list[Interaction], bodies: Mapping[str, bytes | None],
                  routes: Routes, keys: Mapping[str, str], reader: Reader | None, timeout_s: float,
                  max_pages: int) -> None:
    first = None
    for item in pages:
        answer = await _send(recorder, item, item.url, bodies.get(item.fingerprint), routes, keys, timeout_s)
        first = first or answer
    last = pages[-1]
    if reader is None or last.page is None or last.size is None or first is None:
        return
    now = reader(first)
    if not now.ok or now.total is None:
        return
    wanted = min(max_pages, math.ceil(now.total / last.size))
    for page in range(last.page + 1, wanted + 1):  # the result grew past the recorded pages
        url = page_url(last.url, last.platform, page, last.size)
        await _send(recorder, last, url, bodies.get(last.fingerprint), routes, keys, timeout_s)


async def _send(recorder: RecorderTransport, item: Interaction, url: str, body: bytes | None, routes: Routes,
                keys: Mapping[str, str], timeout_s: float) -> Interaction:
    """Send one recorded request again; returns what was recorded for it."""
    request = httpx.Request(item.method, request_url(url, item.platform, routes, keys), content=body or None,
                            headers={"User-Agent": "kopa-recorder (live sample)"},
                            extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout_s)})
    if item.tool:
        request.extensions[TOOL_EXTENSION] = item.tool
    before = len(recorder.recording or ())
    async with asyncio.timeout(timeout_s):  # in-process transports ignore httpx's timeouts
        response = await recorder.handle_async_request(request)
        await response.aread()
    assert recorder.recording is not None
    return recorder.recording.interactions[before]


def request_url(url: str, platform: str, routes: Routes, keys: Mapping[str, str]) -> str:
    """A real request URL for a canonical one: the base URL of its label, masked keys filled in."""
    label, _, rest = url.partition(":")
    path, _, query = rest.partition("?")

    def key() -> str:
        value = keys.get(platform)
        if not value:
            raise ValueError(f"no key for platform {platform!r}: the recorded request {url} needs one "
                             f"(keys given for: {', '.join(sorted(keys)) or 'none'})")
        return quote(value, safe="")

    if platform == SEOUL:
        parts = path.split("/")
        if len(parts) > 1 and parts[1] == MASK:
            parts[1] = key()
        path = "/".join(parts)
    items = []
    for item in query.split("&") if query else ():
        name, _, value = item.partition("=")
        items.append(f"{name}={key()}" if is_secret_param(unquote(name)) and unquote(value) == MASK else item)
    return routes.url_of(label) + path + (f"?{'&'.join(items)}" if items else "")
