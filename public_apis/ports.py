"""The one free-port helper: every layer that starts a server on a loopback port picks the port here.

It lives in ``public_apis`` because that is the one package every other may import (``tests/test_layout.py``):
the sandbox's loopback server, the model-server plans, the console and the benchmarks all share it.
"""

from __future__ import annotations

import socket

__all__ = ["free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host`` right now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
