"""A tiny HTTP server on loopback that plays a model server: scripted replies, recorded requests.

Each queued reply is ``(status, body)`` or ``STALL``, which holds the request open until the
test ends, so the client's own time bound is what ends the call (no sleeping in the test).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STALL = "stall"
# A stalled request is released when the test ends; this only guards against a hung test run.
_STALL_GUARD_SECONDS = 30


@dataclass
class ModelServer:
    url: str
    replies: deque[tuple[int, Any] | str] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)

    def reply(self, status: int, body: Any) -> None:
        self.replies.append((status, body))

    def stall(self) -> None:
        self.replies.append(STALL)


@contextmanager
def model_server() -> Iterator[ModelServer]:
    """Serve on 127.0.0.1 (an ephemeral port) until the block ends."""
    state = ModelServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            state.paths.append(self.path)
            state.headers.append(dict(self.headers))
            state.requests.append(json.loads(body) if body else {})
            reply = state.replies.popleft() if state.replies else (500, {"error": "unscripted"})
            if reply == STALL:
                state.released.wait(_STALL_GUARD_SECONDS)
                return
            status, payload = reply
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # A short poll keeps shutdown (which waits one poll) from costing half a second per test.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        state.released.set()
        server.shutdown()
        server.server_close()
