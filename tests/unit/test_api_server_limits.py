"""``cairn serve`` under hostile or heavy traffic, over real sockets on loopback (issue 14, 6).

Each test speaks raw HTTP/1.1 to a real server so it controls what a client library would not
let it: a body shorter than its Content-Length, a half-close, idle sockets, a burst of connects.
Nothing waits on a clock of its own: a test reads until the server answers or closes.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.api.asgi import ServeLimits
from cairn.api.router import MAX_BODY_BYTES
from cairn.api.server import RunningServer, make_server, start
from cairn.clock import FixedClock
from cairn.models import Event, EventInput, Scope
from cairn.ports import EventStore, Stores
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import HEADERS, Caller, build_api, create_memory

T0 = 1_767_258_000
FAST = ServeLimits(idle_seconds=0.5, request_seconds=0.5)
ANSWER_WITHIN = 10.0  # seconds a test waits for an answer before it fails


class GatedEvents:
    """An event store whose appends wait at a gate; the test sees how many are waiting."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.open = threading.Event()
        self.waiting = 0
        self.changed = threading.Condition()

    def append(
        self,
        scope: Scope,
        event: EventInput,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Event:
        with self.changed:
            self.waiting += 1
            self.changed.notify_all()
        self.open.wait(ANSWER_WITHIN)
        return self.inner.append(
            scope, event, idempotency_key=idempotency_key, deletion_fence=deletion_fence
        )

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.waiting >= count, ANSWER_WITHIN)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclasses.dataclass
class Served:
    running: RunningServer
    stores: Stores
    memory_id: str
    gate: GatedEvents

    @property
    def address(self) -> tuple[str, int]:
        return self.running.server.server_address

    def events(self, actor: str = "a1", session: str = "s") -> list[Event]:
        scope = Scope(memory_id=self.memory_id, actor_id=actor)
        return list(self.stores.events.list_events(scope, session).items)


def serve(limits: ServeLimits, *, gated: bool = False) -> Iterator[Served]:
    """A server over an in-memory backend with one memory; appends wait at the gate if
    ``gated``, else it stands open."""
    clock = FixedClock()
    stores = InMemoryBackend(clock).stores()
    memory_id = create_memory(Caller(build_api(stores, clock)))["id"]
    gate = GatedEvents(stores.events)
    if not gated:
        gate.open.set()
    running = start(build_api(dataclasses.replace(stores, events=gate), clock), limits=limits)
    try:
        yield Served(running, stores, memory_id, gate)
    finally:
        gate.open.set()
        running.stop()


@pytest.fixture
def served() -> Iterator[Served]:
    yield from serve(FAST)


def event_body(text: str = "hello") -> bytes:
    event = {
        "actorId": "a1",
        "sessionId": "s",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": text}, "role": "USER"}}],
    }
    return json.dumps(event).encode()


def head(
    served: Served, length: int, path: str = "", headers: dict[str, str] | None = None
) -> bytes:
    lines = [f"POST {path or f'/memories/{served.memory_id}/events'} HTTP/1.1", "Host: x"]
    lines += [f"{k}: {v}" for k, v in (headers or HEADERS).items()]
    lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def connect(served: Served) -> socket.socket:
    return socket.create_connection(served.address, timeout=ANSWER_WITHIN)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One response (status, lower-cased headers, body), leaving the connection open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    raw_head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = raw_head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    while len(body) < int(headers.get("content-length", 0)):
        body += sock.recv(65536)
    return int(status_line.split()[1]), headers, body


def test_a_body_shorter_than_its_content_length_is_never_executed_on_a_half_close(
    served: Served,
) -> None:
    body = event_body()
    with connect(served) as sock:
        sock.sendall(head(served, len(body) + 40) + body)
        sock.shutdown(socket.SHUT_WR)

        answered = read_all(sock)

    assert b"201" not in answered.split(b"\r\n", 1)[0]
    assert served.events() == []


def test_a_client_that_never_sends_the_rest_of_its_body_gets_408_and_nothing_runs(
    served: Served,
) -> None:
    body = event_body()
    with connect(served) as sock:
        sock.sendall(head(served, len(body) + 40) + body)

        status, headers, answer = read_response(sock)
        closed = read_all(sock)

    assert status == 408
    assert headers["content-type"] == "application/json"
    assert headers["x-amzn-errortype"] == "RequestTimeoutException"
    assert "did not arrive" in json.loads(answer)["message"]
    assert closed == b""  # and the connection is closed: its thread is not held
    assert served.events() == []


def test_idle_connections_hold_no_thread_and_are_closed(served: Served) -> None:
    before = threading.active_count()
    sockets = [connect(served) for _ in range(60)]
    try:
        for sock in sockets[:30]:  # half have been answered once and idle on keep-alive
            sock.sendall(head(served, 2, path="/memories/nowhere") + b"{}")
            assert read_response(sock)[0] == 404
        during = threading.active_count()

        closed = [read_all(sock) for sock in sockets]  # returns once the server closes each
    finally:
        for sock in sockets:
            sock.close()

    assert during - before <= FAST.workers  # the worker pool at most, not one per socket
    assert closed == [b""] * 60


def test_a_burst_of_connects_waits_in_the_listen_backlog(tmp_path: Any) -> None:
    clock = FixedClock()
    server = make_server(build_api(InMemoryBackend(clock).stores(), clock))
    sockets: list[socket.socket] = []
    try:
        for _ in range(300):  # nothing accepts yet: each waits in the kernel's queue
            sockets.append(socket.create_connection(server.server_address, timeout=0.5))
    finally:
        for sock in sockets:
            sock.close()
        server.server_close()

    assert len(sockets) == 300


def test_a_body_over_the_limit_is_a_json_413_before_it_is_read(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(head(served, MAX_BODY_BYTES + 1))

        status, headers, answer = read_response(sock)

    assert status == 413
    assert headers["content-type"] == "application/json"
    assert headers["x-amzn-errortype"] == "ValidationException"
    assert "larger than" in json.loads(answer)["message"]


def test_a_body_that_is_not_json_by_its_content_type_is_a_json_415(served: Served) -> None:
    body = event_body()
    with connect(served) as sock:
        sock.sendall(head(served, len(body), headers={**HEADERS, "Content-Type": "text/plain"}))
        sock.sendall(body)

        status, headers, answer = read_response(sock)

    assert status == 415
    assert headers["x-amzn-errortype"] == "UnsupportedMediaTypeException"
    assert "application/json" in json.loads(answer)["message"]
    assert served.events() == []


def test_a_request_that_is_not_http_is_a_json_400(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")

        status, headers, answer = read_response(sock)

    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(answer)["message"]


def test_past_the_stated_concurrency_requests_get_429_with_retry_after_at_once() -> None:
    limits = ServeLimits(workers=2, queued=0)
    for served in serve(limits, gated=True):
        gate = served.gate
        body = event_body()
        held = [connect(served) for _ in range(limits.concurrency)]
        for sock in held:
            sock.sendall(head(served, len(body)) + body)
        gate.wait_for(limits.concurrency)  # both workers are inside an append

        with connect(served) as extra:
            extra.sendall(head(served, len(body)) + body)
            status, headers, answer = read_response(extra)
        gate.open.set()
        admitted = [read_response(sock)[0] for sock in held]
        for sock in held:
            sock.close()

        assert status == 429
        assert headers["retry-after"] == str(limits.retry_after_seconds)
        assert headers["x-amzn-errortype"] == "ThrottledException"
        assert "capacity" in json.loads(answer)["message"]
        assert admitted == [201] * limits.concurrency
        assert len(served.events()) == limits.concurrency


def test_every_connection_has_nagle_off_so_an_answer_is_not_held_for_an_ack(
    served: Served,
) -> None:
    with connect(served) as sock:
        sock.sendall(head(served, 2, path="/memories/nowhere") + b"{}")
        assert read_response(sock)[0] == 404
        # Read the option while this connection is still open: once the client
        # closes, the server closes its side and the descriptor is gone.
        ours = [
            transport_socket
            for protocol in list(served.running.server.uvicorn.server_state.connections)
            if (transport_socket := protocol.transport.get_extra_info("socket")) is not None
            and transport_socket.fileno() != -1
            and transport_socket.getpeername() == sock.getsockname()
        ]
        assert len(ours) == 1
        assert ours[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
