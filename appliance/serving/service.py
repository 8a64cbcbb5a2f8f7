"""Serve an ASGI app on a loopback port inside the running event loop (tests, benchmarks, `--agent endpoint`).

    async with serve_app(app) as origin:          # "http://127.0.0.1:PORT", lifespan run, stopped on exit
        ...

In the same loop on purpose: the benchmark's episode executor calls back into the run's gateway, whose
connections belong to that loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

__all__ = ["serve_app"]


@contextlib.asynccontextmanager
async def serve_app(app: Any, *, host: str = "127.0.0.1", port: int = 0,
                    startup_timeout_s: float = 30.0) -> AsyncIterator[str]:
    """Run ``app`` under uvicorn on ``host:port`` (0: a free port) until the block ends.

    Raises:
        RuntimeError: the server did not start in time (the port is taken, the lifespan failed).
    """
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                                           loop="none"))
    task = asyncio.create_task(server.serve())
    try:
        deadline = asyncio.get_running_loop().time() + startup_timeout_s
        while not server.started:
            if task.done() or asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"the server on {host}:{port} did not start"
                                   + (f": {task.exception()!r}" if task.done() and task.exception() else ""))
            await asyncio.sleep(0.01)
        bound = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
