"""The gateway the console starts when none runs: the sandbox upstream in-process, served on loopback.

    local = LocalGateway.open(upstream=InProcessSandbox(home), audit_file=home / "logs" / "audit.jsonl")
    local.start()            # uvicorn on 127.0.0.1 (a free port; the same port again after ``stop``)
    local.endpoint           # GatewayEndpoint(url, token): the console attaches to it like to any other
    local.stop(); local.start()   # what the console survives
    local.close()   # or await local.aclose() inside an event loop

    local = LocalGateway.over_sandbox(settings, audit_file=..., catalog=..., progress=print)
    local.start(progress=print)   # what the console runs: each step is said as it begins (a fresh install
                                  # builds the sandbox world first, which takes a minute or more)

The token is made here, per process, and never written anywhere.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from mcp_gateway.gateway import Gateway, InProcessUpstream, open_gateway
from mcp_gateway.server import ToolSet, attach_audit_file, create_gateway_app, default_toolsets, detach_audit_file
from sandbox.loopback import LoopbackServer, free_port

from .gateway_http import GatewayEndpoint

if TYPE_CHECKING:
    from appliance.config import KopaSettings
    from mcp_gateway.catalog import Catalog

Progress = Callable[[str], None]


def _quiet(_step: str) -> None:
    pass


class LocalGateway:
    def __init__(self, gateway: Gateway, audit_file: Path | None,
                 toolsets: Mapping[str, ToolSet] | None = None) -> None:
        self.gateway = gateway
        # every default set (/mcp, /mcp/search, /mcp/platform/<id>, ...) unless told; tests serve /mcp alone
        self.toolsets = dict(toolsets) if toolsets is not None else default_toolsets(gateway.catalog)
        self._token = secrets.token_urlsafe(24)
        self.port = free_port()
        self._server: LoopbackServer | None = None
        self._audit: logging.Handler | None = attach_audit_file(audit_file) if audit_file else None

    @classmethod
    def open(cls, *, upstream: InProcessUpstream, home: Path, audit_file: Path | None = None,
             toolsets: Mapping[str, ToolSet] | None = None) -> LocalGateway:
        return cls(open_gateway(upstream="sandbox", sandbox=upstream, profile="chat", home=home), audit_file, toolsets)

    @classmethod
    def over_sandbox(cls, settings: KopaSettings, *, audit_file: Path | None,
                     catalog: Callable[[], Catalog] | None = None, progress: Progress = _quiet) -> LocalGateway:
        """The gateway over the sandbox world of ``settings``, saying each step through ``progress``.

        ``catalog``: how to get the catalog (the console passes its own, loaded once per process).
        """
        from mcp_gateway.catalog import load_catalog
        from sandbox import InProcessSandbox, ensure_world

        box = settings.sandbox
        worlds = settings.home_dir / "worlds"
        progress(f"sandbox world {box.world} (seed {box.seed}, scale {box.scale:g}) under {worlds}")
        # built once per home; its "building … into FILE" line is a step (the "built in" line adds nothing)
        ensure_world(settings.home_dir, seed=box.seed, version=box.world, scale=box.scale,
                     log=lambda line: progress(line) if line.startswith("building") else None)
        upstream = InProcessSandbox(settings.home_dir, seed=box.seed, version=box.world, scale=box.scale)
        progress("loading the tool catalog")
        tools = (catalog or load_catalog)()
        progress(f"opening the gateway runtime over {len(tools):,} tools")
        gateway = open_gateway(upstream="sandbox", sandbox=upstream, profile="chat", home=settings.home_dir,
                               catalog=tools)
        toolsets = default_toolsets(gateway.catalog)
        progress(f"{len(toolsets)} toolsets (/mcp, /mcp/search, a set per platform and domain)")
        return cls(gateway, audit_file, toolsets)

    @property
    def endpoint(self) -> GatewayEndpoint:
        return GatewayEndpoint(f"http://127.0.0.1:{self.port}", SecretStr(self._token))

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self, progress: Progress = _quiet) -> None:
        if self._server is None:
            # A new app per start (the SDK's session managers run once); the runtime's resources stay open
            # across stop/start because the app's lifespan does not own them.
            progress("building the gateway's HTTP app")
            app = create_gateway_app(self.gateway.runtime, tokens={self._token}, toolsets=self.toolsets, resources=())
            progress(f"binding the server on 127.0.0.1:{self.port}")
            server = LoopbackServer(app, port=self.port, lifespan=True)
            server.__enter__()
            self._server = server
            progress(f"server bound on {self.endpoint.url}")

    def stop(self) -> None:
        if self._server is not None:
            self._server.__exit__(None, None, None)
            self._server = None

    def close(self) -> None:
        """Stop serving and close the runtime (from outside any event loop)."""
        self.stop()
        self._detach()
        asyncio.run(self.gateway.aclose())

    async def aclose(self) -> None:
        """``close`` from inside an event loop (the console's own, on exit)."""
        await asyncio.to_thread(self.stop)
        self._detach()
        await self.gateway.aclose()

    def _detach(self) -> None:
        if self._audit is not None:
            detach_audit_file(self._audit)
            self._audit = None
