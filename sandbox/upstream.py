"""The sandbox as an in-process upstream: what a gateway, a benchmark or a rollout needs to talk to it.

    sandbox = InProcessSandbox(home, scale=0.05)          # nothing is built or opened yet
    app = sandbox.app()                                   # builds or opens the world, on first use
    transport = sandbox.transport()                       # the app over ASGI (memo_bytes > 0: repeats memoized)
    ...
    sandbox.close()

A strict replay never calls ``app()``, so it opens no world. The gateway takes any object of
this shape (``mcp_gateway.gateway.InProcessUpstream``); only composition points build one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from starlette.types import ASGIApp

from .app import create_sandbox_app
from .keys import KeyStore, default_keys
from .memo import MemoTransport
from .versions import DEFAULT_SEED
from .world.builder import ensure_world
from .world.runtime import World


@dataclass
class InProcessSandbox:
    """The sandbox world (built once under ``home/worlds``) served in-process over ASGI."""

    home: Path
    seed: int = DEFAULT_SEED
    version: str = "v1"
    scale: float = 1.0
    keys: Mapping[str, str] = field(default_factory=default_keys)
    memo_bytes: int = 0  # > 0: ``transport`` keeps answers to repeated requests, up to this many body bytes
    world: World | None = field(default=None, init=False)

    @property
    def source(self) -> str:
        """Provenance written into recordings."""
        return f"sandbox@{self.version}"

    def app(self) -> ASGIApp:
        if self.world is None:
            self.world = World.open(ensure_world(self.home, seed=self.seed, version=self.version, scale=self.scale))
        return create_sandbox_app(self.world, KeyStore.from_mapping(self.keys))

    def transport(self) -> httpx.AsyncBaseTransport:
        """The app over ASGI; with ``memo_bytes``, answers repeated requests from a bounded memo (``sandbox.memo``:
        the app, faultless, answers a request the same way every time)."""
        asgi = httpx.ASGITransport(self.app())
        return MemoTransport(asgi, max_bytes=self.memo_bytes) if self.memo_bytes > 0 else asgi

    def describe(self) -> str:
        """One line naming the exact world (for run records), or what would be opened."""
        if self.world is None:
            return f"sandbox world {self.version} seed={self.seed} scale={self.scale:g} (not opened)"
        w = self.world
        return f"sandbox world {w.version} seed={w.seed} scale={w.scale:g} content_hash={w.content_hash}"

    def close(self) -> None:
        if self.world is not None:
            self.world.close()
            self.world = None
