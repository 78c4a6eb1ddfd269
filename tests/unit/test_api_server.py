"""The stdlib host: raw paths reach the router untouched, and every method gets an AWS answer."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from cairn.api.server import RunningServer, export_line, start
from cairn.clock import FixedClock
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import HEADERS, build_api


@pytest.fixture
def running() -> Iterator[RunningServer]:
    clock = FixedClock()
    server = start(build_api(InMemoryBackend(clock).stores(), clock))
    yield server
    server.stop()


def request(
    server: RunningServer,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    host, port = server.server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        connection.request(method, path, body=body, headers=HEADERS if headers is None else headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_encoded_slashes_in_the_path_reach_the_router(running: RunningServer) -> None:
    created = request(
        running,
        "POST",
        "/memories/create",
        json.dumps({"name": "m", "eventExpiryDuration": 7}).encode(),
    )
    memory_id = json.loads(created[2])["memory"]["id"]
    event = {"actorId": "u/1", "sessionId": "s", "eventTimestamp": 1, "payload": []}
    request(running, "POST", f"/memories/{memory_id}/events", json.dumps(event).encode())

    status, _, body = request(
        running, "POST", f"/memories/{memory_id}/actor/u%2F1/sessions/s", b"{}"
    )

    assert (created[0], status) == (202, 200)
    assert [e["actorId"] for e in json.loads(body)["events"]] == ["u/1"]


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS", "TRACE", "BREW"])
def test_any_method_is_answered_by_the_router(running: RunningServer, method: str) -> None:
    status, headers, _ = request(running, method, "/memories/")

    assert status == 404
    assert headers["x-amzn-ErrorType"] == "UnknownOperationException"


def test_a_bad_content_length_is_a_client_error(running: RunningServer) -> None:
    status, _, _ = request(
        running, "POST", "/memories/", headers={**HEADERS, "Content-Length": "-5"}
    )

    assert 400 <= status < 500


def test_the_export_line_points_both_planes_at_the_server(running: RunningServer) -> None:
    assert export_line(running.url) == (
        f"export AWS_ENDPOINT_URL_BEDROCK_AGENTCORE={running.url} "
        f"AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL={running.url}"
    )
