"""The sandbox upstream: one Starlette app serving all ten emulated platforms.

Usage::

    world = World.open(ensure_world(data_dir))
    app = create_sandbox_app(world)                      # KeyStore.default(), no faults
    httpx.Client(transport=httpx.ASGITransport(app), base_url="http://sandbox")

Each platform lives under its host prefix followed by the real path, e.g.
``/dart/api/list.json`` for ``https://opendart.fss.or.kr/api/list.json``; a request whose
``Host`` header names a real platform host (``opendart.fss.or.kr``) is routed to that prefix,
so a client configured with live base URLs reaches the sandbox unchanged through an ASGI or
proxying transport. Moving a platform between live and sandbox changes only its base URL.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .faults import FaultInjector, FaultKind, FaultProfile
from .keys import KeyStore
from .platforms import platform_modules
from .platforms.base import PlatformContext, PlatformSpec
from .world.runtime import World


class FaultMiddleware:
    """Injects the profile's faults into one platform, rendered the platform's way."""

    def __init__(self, app: ASGIApp, platform: str, injector: FaultInjector, render: Any, hang_seconds: float):
        self.app, self.platform, self.injector = app, platform, injector
        self.render, self.hang_seconds = render, hang_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = self.injector.draw(self.platform)
        if kind is None:
            await self.app(scope, receive, send)
        elif kind is FaultKind.HANG:
            await asyncio.sleep(self.hang_seconds)
            await self.app(scope, receive, send)
        elif kind is FaultKind.MALFORMED:
            await self._garbled(scope, receive, send)
        else:
            response: Response = self.render(kind, Request(scope, receive))
            await response(scope, receive, send)

    async def _garbled(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Run the real handler, then send its body cut in half plus a stray byte sequence.
        messages: list[Message] = []

        async def capture(message: Message) -> None:
            messages.append(message)

        await self.app(scope, receive, capture)
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
        start = next(m for m in messages if m["type"] == "http.response.start")
        broken = body[: max(1, len(body) // 2)] + b"\xed\x95<!--"
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(broken)).encode()))
        await send({"type": "http.response.start", "status": start["status"], "headers": headers})
        await send({"type": "http.response.body", "body": broken})


class HostDispatch:
    """Route requests addressed to a real platform host onto that platform's sandbox prefix."""

    def __init__(self, app: ASGIApp, host_prefixes: dict[str, str]):
        self.app, self.host_prefixes = app, host_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            prefix = self.host_prefixes.get(host.split(":")[0].lower())
            if prefix and not scope["path"].startswith(prefix + "/"):
                scope = dict(scope, path=prefix + scope["path"], raw_path=(prefix + scope["path"]).encode())
        await self.app(scope, receive, send)


def create_sandbox_app(world: World, keys: KeyStore | None = None,
                       faults: FaultProfile | None = None) -> ASGIApp:
    """Build the ASGI app serving every platform over ``world``."""
    keys = keys or KeyStore.default()
    profile = faults or FaultProfile()
    injector = FaultInjector(profile)
    removed = world.removed_services()
    routes: list[Any] = []
    specs: list[PlatformSpec] = []
    for module in platform_modules():
        apps = [(module.SPEC, module.create_app)]
        apps += list(getattr(module, "EXTRA_APPS", ()))
        for spec, factory in apps:
            pctx = PlatformContext(spec=spec, world=world, keys=keys,
                                   removed_services=frozenset(s for p, s in removed if p == module.SPEC.id))
            app = factory(pctx)
            if not profile.is_quiet():
                app = FaultMiddleware(app, module.SPEC.id, injector, module.fault_response, profile.hang_seconds)
            routes.append(Mount(spec.mount, app=app))
            specs.append(spec)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "world": world.version, "content_hash": world.content_hash})

    async def index(request: Request) -> Response:
        origin = f"{request.url.scheme}://{request.url.netloc}"
        return Response(json.dumps({
            "world": {"version": world.version, "seed": world.seed, "content_hash": world.content_hash},
            "platforms": [{"id": s.id, "title": s.title, "domain": s.domain, "live_base_url": s.live_base_url,
                           "sandbox_base_url": s.sandbox_base_url(origin)} for s in specs],
        }, ensure_ascii=False), media_type="application/json")

    starlette = Starlette(routes=[Route("/", index), Route("/healthz", healthz), *routes])
    starlette.state.world = world
    starlette.state.injector = injector
    return HostDispatch(starlette, {s.host: s.host_prefix for s in specs})
