"""``cairn serve``'s host: the router behind the standard library's threading HTTP server.

Loopback by default, one thread per connection, HTTP/1.1 keep-alive (botocore reuses
connections). The raw request line's path goes to the router untouched, so percent-encoded
slashes in actor ids and namespaces survive. Request lines are not logged: paths carry actor
ids and namespaces.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from cairn.api.router import MAX_BODY_BYTES, Api, ApiRequest

LOOPBACK = "127.0.0.1"


def _handler_class(api: Api) -> type[BaseHTTPRequestHandler]:
    class AgentCoreRequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "cairn"

        def _serve(self) -> None:
            target = self.path
            if not target.startswith("/"):  # absolute-form request line (via a proxy)
                parts = urlsplit(target)
                target = parts.path + (f"?{parts.query}" if parts.query else "")
            raw_path, _, query = target.partition("?")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self.send_error(413 if length > 0 else 400, "bad Content-Length")
                self.close_connection = True
                return
            body = self.rfile.read(length) if length else b""
            headers = dict(self.headers.items())
            response = api.handle(ApiRequest(self.command, raw_path, query, headers, body))
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def __getattr__(self, name: str) -> Any:
            # BaseHTTPRequestHandler dispatches to ``do_<METHOD>`` and answers 501 when there
            # is none; every method goes to the router, which answers an unknown one with 404.
            if name.startswith("do_"):
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args: object) -> None:
            """Silent: request lines carry actor ids and namespaces (see the module docstring)."""

    return AgentCoreRequestHandler


@dataclass
class RunningServer:
    """A server answering on its own thread; ``stop`` shuts it down and frees the port."""

    server: ThreadingHTTPServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def make_server(api: Api, host: str = LOOPBACK, port: int = 0) -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``api``; port 0 picks a free port."""
    server = ThreadingHTTPServer((host, port), _handler_class(api))
    server.daemon_threads = True
    return server


def start(api: Api, host: str = LOOPBACK, port: int = 0) -> RunningServer:
    """Serve ``api`` on a background thread (tests, embedding); returns once it listens."""
    server = make_server(api, host, port)
    # A short poll keeps ``stop`` quick: shutdown waits for the serving loop's next poll.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="cairn-serve", daemon=True
    )
    thread.start()
    return RunningServer(server, thread)


def export_line(url: str) -> str:
    """The shell line that points AgentCore clients (boto3, the SDK, Strands) at ``url``."""
    return (
        f"export AWS_ENDPOINT_URL_BEDROCK_AGENTCORE={url} "
        f"AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL={url}"
    )
