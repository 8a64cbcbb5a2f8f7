"""Platform clients and the ``ClientSet`` that holds one per envelope family.

    clients = ClientSet(PlatformURLs.sandbox("http://sandbox"), transport=httpx.ASGITransport(app),
                        secrets=SecretStore.from_env())
    page = await clients.fetch(endpoint, {"corp_code": "00126380"}, page_no=1, page_size=10)
    await clients.aclose()

All clients of a set share one httpx client (so one transport: default network, ASGI, or the
recorder's), one set of per-platform gates (concurrency and rate), one seeded jitter source and
the secret store. ``fetch`` dispatches by ``endpoint.family``; without ``key`` it takes the
platform's key from the store.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, Self

import httpx

from ..catalog.spec import Endpoint
from .base import ClientContext, PlatformClient, UpstreamPage
from .config import Limits, PlatformURLs
from .dart import DartClient
from .datago import DatagoClient
from .expressway import ExpresswayClient
from .hub import HubClient
from .law import LawClient
from .schoolinfo import SchoolinfoClient
from .secrets import SecretError, SecretStore
from .seoul import SeoulClient

CLIENT_CLASSES: tuple[type[PlatformClient], ...] = (
    HubClient, SeoulClient, DatagoClient, DartClient, ExpresswayClient, LawClient, SchoolinfoClient)


class ClientSet:
    """One client per family over shared configuration."""

    def __init__(self, urls: PlatformURLs, *, transport: httpx.AsyncBaseTransport | None = None,
                 secrets: SecretStore | None = None, limits: Limits | None = None, rng: random.Random | None = None):
        self.ctx = ClientContext.create(urls, transport=transport, limits=limits, rng=rng, secrets=secrets)
        self.clients: dict[str, PlatformClient] = {cls.family: cls(self.ctx) for cls in CLIENT_CLASSES}

    def client(self, family: str) -> PlatformClient:
        try:
            return self.clients[family]
        except KeyError:
            raise ValueError(f"no platform client for family {family!r} "
                             f"(families: {', '.join(self.clients)})") from None

    async def fetch(self, endpoint: Endpoint, params: dict[str, Any], *, page_no: int = 1, page_size: int = 10,
                    key: str | None = None, tool: str | None = None) -> UpstreamPage:
        if key is None:
            if self.ctx.secrets is None:
                raise SecretError(f"no key given for platform {endpoint.platform!r} and no secret store configured")
            key = self.ctx.secrets.key(endpoint.platform)
        return await self.client(endpoint.family).fetch(endpoint, params, page_no=page_no, page_size=page_size,
                                                        key=key, tool=tool)

    def prime_replay(self, endpoint_of: Callable[[str], Endpoint | None], *, budget_s: float = 10.0) -> int:
        """In a replay, read ahead into the reading cache the recorded bodies of endpoints that answer a whole
        result at once (``Endpoint.upstream_paged`` False, or local filters: every call of theirs reads the whole
        list, e.g. the 8,513-company corpCode.xml ZIP); returns how many rows were read. Each is read exactly as the
        first call would read it (``PlatformClient.read_replayed``, the same key), so a call served from it
        returns what it would have. ``endpoint_of``: tool name → its endpoint (None: unknown or built-in).
        Stops after ``budget_s`` seconds; the cache's bounds hold as for any reading."""
        recorder, bundle = self.ctx.recorder, self.ctx.recorder.bundle if self.ctx.recorder is not None else None
        if bundle is None or not recorder.mode.replays or self.ctx.readings is None:  # type: ignore[union-attr]
            return 0
        deadline = time.perf_counter() + budget_s
        tools, offsets, lengths = bundle.column("tool"), bundle.column("body_offset"), bundle.column("body_length")
        read = 0
        for row, tool in enumerate(tools):
            endpoint = endpoint_of(tool) if tool else None
            if endpoint is None or (endpoint.upstream_paged and not endpoint.local_filters):
                continue
            client = self.clients.get(endpoint.family)
            if client is None:
                continue
            recorded = bundle.response(row)
            response = httpx.Response(recorded.status, headers=recorded.headers, content=recorded.body,
                                      request=httpx.Request("GET", "http://replay.invalid/"))
            client.read_replayed(endpoint, response, (bundle.version, offsets[row], lengths[row]))
            read += 1
            if time.perf_counter() > deadline:
                break
        return read

    async def aclose(self) -> None:
        await self.ctx.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["CLIENT_CLASSES", "ClientContext", "ClientSet", "Limits", "PlatformClient", "PlatformURLs",
           "SecretError", "SecretStore", "UpstreamPage"]
