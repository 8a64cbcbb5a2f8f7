"""Serve an ASGI app on a free 127.0.0.1 port from a background thread.

Used where a real socket is the point: ``kopa sandbox check``, tests that go over loopback
HTTP, and anything that wants the sandbox without a second process.
"""

from __future__ import annotations

import threading
import time

import uvicorn
from starlette.types import ASGIApp

from public_apis.ports import free_port

__all__ = ["LoopbackServer", "free_port"]  # free_port: the one helper (public_apis.ports), named here too


class LoopbackServer:
    """uvicorn serving ``app`` on 127.0.0.1 while the ``with`` block runs."""

    def __init__(self, app: ASGIApp, port: int | None = None, start_timeout: float = 20.0, lifespan: bool = False):
        self.port = port or free_port()
        self.start_timeout = start_timeout
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on" if lifespan else "off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the server on port {self.port} did not start within {self.start_timeout:g} s")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
