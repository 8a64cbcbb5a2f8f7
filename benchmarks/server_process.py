"""Run a server command in its own process on a free loopback port, for the benchmarks.

Client and server in separate processes never share a GIL, so a figure measures the server. The process is the
model-server manager's (``models.server.ModelServer``): started with ``--port N``, healthy when ``/healthz`` answers
200, stopped with SIGTERM (SIGKILL after a grace period), and never outliving the benchmark.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from models.server import ModelServer, ServerPlan
from public_apis.ports import free_port

REPO = Path(__file__).resolve().parent.parent
STOP_GRACE_S = 20.0


@contextmanager
def server_process(command: list[str], env: dict[str, str], start_timeout: float = 120) -> Iterator[str]:
    """Start ``command --port N``; yield its origin once /healthz answers; stop it afterwards."""
    with server_popen(command, env, start_timeout) as (origin, _):
        yield origin


@contextmanager
def server_popen(command: list[str], env: dict[str, str],
                 start_timeout: float = 120) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """As ``server_process``, yielding the process too (its pid, for /proc readings).

    Raises:
        models.errors.ModelServerError: the command exited or did not answer in time (with the end of its output).
    """
    port = free_port()
    plan = ServerPlan(backend=Path(command[0]).name, command=(*command, "--port", str(port)), env=env,
                      host="127.0.0.1", port=port, served_name="", health_path="/healthz",
                      reason="a benchmark's server", cwd=str(REPO))
    with ModelServer(plan, startup_timeout_s=start_timeout, stop_grace_s=STOP_GRACE_S) as server:
        assert server.process is not None
        yield f"http://127.0.0.1:{port}", server.process
