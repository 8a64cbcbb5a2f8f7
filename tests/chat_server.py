"""A real chat-completions HTTP server on loopback for tests of our OpenAI-compatible clients.

    server, base_url = serve_chat(respond)     # respond(body, headers) -> (status, payload[, reply headers])
    ...
    stop(server)

Each test module keeps its own scripting (which reply comes for which request); this is only the server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[dict[str, Any], dict[str, str]], tuple[Any, ...]]  # (status, str or JSON[, headers])


def serve_chat(respond: Respond) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert self.path == "/v1/chat/completions", self.path
            # header names are case-insensitive: respond sees them as Title-Case whatever the client sent
            status, payload, *more = respond(body, {k.title(): v for k, v in self.headers.items()})
            data = (payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)).encode()
            try:
                self.send_response(status)
                for name, value in (more[0] if more else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
