"""The gateway's HTTP face: streamable HTTP MCP at ``/mcp`` and one virtual server per tool set.

``/mcp`` serves the ``all`` tool set and ``/mcp/<name>`` each named set (``/mcp/platform/dart``,
``/mcp/domain/finance``, ``/mcp/search``). Every MCP path needs a configured bearer token
(401 with ``WWW-Authenticate`` otherwise); the SDK's session manager binds each session to the
token that opened it. ``/healthz`` and ``/metrics`` are open, for probes and scrapers. A request
body over the runtime's ``limits.max_request_bytes`` is refused with 413 before auth or parsing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from mcp.server.auth.middleware.bearer_auth import (
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from ..clients.replay_cache import ResultCache
from .body_limit import BodySizeLimit
from .mcp_server import DEFAULT_PAGE_SIZE, ListedTools, RuntimeProtocol, build_mcp_server
from .telemetry import Telemetry
from .toolset import ToolSet
from .warm import warm_up

logger = logging.getLogger(__name__)

DEFAULT_TOOLSET = "all"


class StaticTokenVerifier:
    """Accepts the configured bearer tokens; a token's identity is a hash prefix, never the token."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = tuple(t.encode() for t in tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        offered = token.encode()
        for known in self._tokens:
            if hmac.compare_digest(known, offered):
                return AccessToken(token=token, client_id=f"bearer-{hashlib.sha256(known).hexdigest()[:12]}",
                                   scopes=[])
        return None


class SessionEndHook:
    """Drops a session's runtime state once its client ends it (HTTP DELETE with Mcp-Session-Id)."""

    def __init__(self, app: StreamableHTTPASGIApp, runtime: RuntimeProtocol) -> None:
        self.app, self.runtime = app, runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = Request(scope).headers.get(MCP_SESSION_ID_HEADER)
        if scope["method"] != "DELETE" or not session:
            await self.app(scope, receive, send)
            return

        async def reset_then_send(message: Message) -> None:
            # Reset before the client sees the 2xx, so that "closed" always means "state gone".
            if message["type"] == "http.response.start" and message["status"] < 300:
                self.runtime.reset_session(session)
            await send(message)

        await self.app(scope, receive, reset_then_send)


def _run_all(work: Sequence[Callable[[], Any]]) -> None:
    """Start-up work left until the app serves; a failure is logged and left to the request that meets it."""
    for job in work:
        try:
            job()
        except Exception as exc:  # noqa: BLE001 - the same work runs again on the request that needs it
            logger.warning("deferred start-up work %s failed (%s); the first request that needs it retries",
                           getattr(job, "__qualname__", job), type(exc).__name__)


def create_gateway_app(runtime: RuntimeProtocol, *, tokens: set[str], toolsets: Mapping[str, ToolSet],
                       page_size: int = DEFAULT_PAGE_SIZE, telemetry: Telemetry | None = None,
                       resources: Sequence[contextlib.AbstractAsyncContextManager[Any]] = (),
                       warm: bool = True) -> Starlette:
    """The Starlette app; run it with its lifespan on (the session managers live there).

    ``resources`` (the runtime's ``ClientSet``, ...) are entered and closed in the lifespan, so
    their connections belong to the event loop that serves the app. ``warm``: the lifespan does
    what the first calls would pay before serving (``warm.warm_up``).
    """
    if not tokens:
        raise ValueError("the gateway needs at least one bearer token (configuration: gateway tokens)")
    if DEFAULT_TOOLSET not in toolsets:
        raise ValueError(f"toolsets must include {DEFAULT_TOOLSET!r}, which /mcp serves")
    telemetry = telemetry or Telemetry()
    results = ResultCache()  # replayed results' encodings, shared by the tool sets of this one runtime
    listing = ListedTools(runtime)  # each tool's listing, built once for all the sets it is in
    deferred: list[Callable[[], Any]] = []  # search indexes: built once the app serves, not before /healthz
    managers: list[StreamableHTTPSessionManager] = []
    routes: list[Route] = []
    for name, toolset in toolsets.items():
        server = build_mcp_server(runtime, toolset, page_size=page_size, telemetry=telemetry, results=results,
                                  listing=listing, deferred=deferred)
        manager = StreamableHTTPSessionManager(app=server, json_response=True)
        managers.append(manager)
        endpoint = RequireAuthMiddleware(SessionEndHook(StreamableHTTPASGIApp(manager), runtime), required_scopes=[])
        paths = [f"/mcp/{name}"] + (["/mcp"] if name == DEFAULT_TOOLSET else [])
        routes += [Route(path, endpoint=endpoint) for path in paths]

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "tools": len(runtime.catalog.tools), "profile": runtime.profile,
                             "toolsets": sorted(toolsets)})

    async def metrics(request: Request) -> Response:
        return Response(telemetry.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for resource in resources:
                await stack.enter_async_context(resource)
            for manager in managers:
                await stack.enter_async_context(manager.run())
            if warm:
                warm_up(runtime)  # before the first request: what the first calls would otherwise pay
            if deferred:  # while it serves: a search that comes first builds its index itself
                threading.Thread(target=_run_all, args=(deferred,), name="kopa-search-index", daemon=True).start()
            yield

    routes += [Route("/healthz", healthz, methods=["GET"]), Route("/metrics", metrics, methods=["GET"])]
    backend = BearerAuthBackend(StaticTokenVerifier(tokens))
    return Starlette(routes=routes, lifespan=lifespan, middleware=[
        Middleware(BodySizeLimit, max_bytes=runtime.limits.max_request_bytes),  # outermost: before auth reads
        Middleware(AuthenticationMiddleware, backend=backend)])
