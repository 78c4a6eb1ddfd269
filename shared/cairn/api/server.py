"""``cairn serve``'s host: the router as an ASGI app (``cairn.api.asgi``) under uvicorn.

uvicorn (asyncio + h11) parses HTTP/1.1 and keeps connections alive (botocore reuses them);
every connection has TCP_NODELAY, so an answer is not held back by Nagle's algorithm waiting
for the client's delayed ACK. The socket is bound here, with a listen
backlog of ``ServeLimits.backlog``, so the port is known and connections queue before the loop
runs. The raw request target goes to the router untouched, so percent-encoded slashes in actor
ids and namespaces survive. Nothing is logged per request: paths carry actor ids.

Below the app, the protocol adds what uvicorn leaves open: a connection that never sends a
request is closed after ``idle_seconds`` and one whose request head stalls after
``request_seconds``; past ``max_connections`` a connection's request is answered 429; a
request h11 cannot parse gets a JSON 400, like every other error.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from cairn.api.asgi import ApiApp, ServeLimits, error_response, over_capacity, send_response
from cairn.api.errors import ApiError
from cairn.api.router import Api

LOOPBACK = "127.0.0.1"


def _protocol_class(app: ApiApp) -> type[H11Protocol]:
    limits = app.limits

    class AgentCoreProtocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.access_log = False  # never, whatever the root logger has: paths name actors
            self._head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            # asyncio sets TCP_NODELAY only on sockets made with proto=IPPROTO_TCP, and an
            # accepted socket has proto 0: without it, a response's second write waits for the
            # client's delayed ACK (about 40 ms on Linux) -- CreateEvent took ~48 ms.
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if len(self.connections) > limits.max_connections:
                self.app = _refuse_all
            # uvicorn arms its idle timer only after a response; arm it for the first request.
            self.timeout_keep_alive_task = self.loop.call_later(
                limits.idle_seconds, self.timeout_keep_alive_handler
            )

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            underway = self.cycle is not None and not self.cycle.response_complete
            if underway and self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            elif not underway and self._head_timer is None:
                self._head_timer = self.loop.call_later(limits.request_seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.close()  # the head never completed: there is no request to answer

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            message = "the request is not valid HTTP/1.1; check its request line and headers"
            refused = error_response(ApiError(400, "ValidationException", message))
            headers = [(k.encode(), v.encode()) for k, v in refused.headers.items()]
            headers += [
                (b"content-length", str(len(refused.body)).encode()),
                (b"connection", b"close"),
            ]
            for event in (
                h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                h11.Data(data=refused.body),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event) or b"")
            self.transport.close()

    async def _refuse_all(scope: Any, receive: Any, send: Any) -> None:
        await send_response(send, over_capacity(limits))

    return AgentCoreProtocol


class ApiServer:
    """A bound server for an ``Api``; ``serve_forever`` runs it, ``shutdown`` ends that."""

    def __init__(self, api: Api, host: str, port: int, limits: ServeLimits) -> None:
        self.app = ApiApp(api, limits)
        self.socket = socket.create_server((host, port), backlog=limits.backlog)
        config = uvicorn.Config(
            self.app,
            http=_protocol_class(self.app),
            loop="asyncio",
            lifespan="off",
            interface="asgi3",
            log_config=None,
            access_log=False,
            server_header=False,
            timeout_keep_alive=limits.idle_seconds,  # type: ignore[arg-type]  # a float works
            timeout_graceful_shutdown=5,
            backlog=limits.backlog,
        )
        self.uvicorn = uvicorn.Server(config)

    @property
    def server_address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        """Serve until ``shutdown`` (or SIGINT / SIGTERM on the main thread)."""
        self.uvicorn.run(sockets=[self.socket])

    def shutdown(self) -> None:
        self.uvicorn.should_exit = True

    def server_close(self) -> None:
        self.app.close()
        self.socket.close()


@dataclass
class RunningServer:
    """A server answering on its own thread; ``stop`` shuts it down and frees the port."""

    server: ApiServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()


def make_server(
    api: Api, host: str = LOOPBACK, port: int = 0, limits: ServeLimits | None = None
) -> ApiServer:
    """A bound (not yet serving) server for ``api``; port 0 picks a free port."""
    return ApiServer(api, host, port, limits or ServeLimits())


def start(
    api: Api, host: str = LOOPBACK, port: int = 0, limits: ServeLimits | None = None
) -> RunningServer:
    """Serve ``api`` on a background thread (tests, embedding). Connections made before the
    loop runs wait in the listen backlog."""
    server = make_server(api, host, port, limits)
    thread = threading.Thread(target=server.serve_forever, name="cairn-serve", daemon=True)
    thread.start()
    return RunningServer(server, thread)


def export_line(url: str) -> str:
    """The shell line that points AgentCore clients (boto3, the SDK, Strands) at ``url``."""
    return (
        f"export AWS_ENDPOINT_URL_BEDROCK_AGENTCORE={url} "
        f"AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL={url}"
    )
