"""The gateway the console starts when none runs: the sandbox upstream in-process, served on loopback.

    local = LocalGateway.open(upstream=InProcessSandbox(home), audit_file=home / "logs" / "audit.jsonl")
    local.start()            # uvicorn on 127.0.0.1 (a free port; the same port again after ``stop``)
    local.endpoint           # GatewayEndpoint(url, token): the console attaches to it like to any other
    local.stop(); local.start()   # what the console survives
    local.close()   # or await local.aclose() inside an event loop

The token is made here, per process, and never written anywhere.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from mcp_gateway.gateway import Gateway, InProcessUpstream, open_gateway
from mcp_gateway.server import ToolSet, attach_audit_file, create_gateway_app, default_toolsets, detach_audit_file
from sandbox.loopback import LoopbackServer, free_port

from .gateway_http import GatewayEndpoint


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

    @property
    def endpoint(self) -> GatewayEndpoint:
        return GatewayEndpoint(f"http://127.0.0.1:{self.port}", SecretStr(self._token))

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        if self._server is None:
            # A new app per start (the SDK's session managers run once); the runtime's resources stay open
            # across stop/start because the app's lifespan does not own them.
            app = create_gateway_app(self.gateway.runtime, tokens={self._token}, toolsets=self.toolsets, resources=())
            server = LoopbackServer(app, port=self.port, lifespan=True)
            server.__enter__()
            self._server = server

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
