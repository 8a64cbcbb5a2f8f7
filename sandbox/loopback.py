"""Serve an ASGI app on a free 127.0.0.1 port from a background thread.

Used where a real socket is the point: ``kopa sandbox check``, tests that go over loopback
HTTP, and anything that wants the sandbox without a second process.
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from starlette.types import ASGIApp


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
