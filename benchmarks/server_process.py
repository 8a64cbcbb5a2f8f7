"""Run a server command in its own process on a free loopback port, for the benchmarks.

Client and server in separate processes never share a GIL, so a figure measures the server.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from sandbox.loopback import free_port

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def server_process(command: list[str], env: dict[str, str], start_timeout: float = 120) -> Iterator[str]:
    """Start ``command --port N``; yield its origin once /healthz answers; stop it afterwards."""
    with server_popen(command, env, start_timeout) as (origin, _):
        yield origin


@contextmanager
def server_popen(command: list[str], env: dict[str, str],
                 start_timeout: float = 120) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """As ``server_process``, yielding the process too (its pid, for /proc readings)."""
    port = free_port()
    proc = subprocess.Popen([*command, "--port", str(port)], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    origin = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                httpx.get(origin + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{' '.join(command)} did not start") from None
                time.sleep(0.2)
        yield origin, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)
