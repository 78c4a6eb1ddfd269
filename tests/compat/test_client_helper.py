"""cairn.api.client.use_cairn on a real boto3 Session: the shared token, execute-api signing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.api import Api, ApiContext, ApiSettings
from cairn.api.client import use_cairn
from cairn.api.server import RunningServer, start
from cairn.clock import SystemClock
from cairn.testing import InMemoryBackend
from tests.compat.conftest import boto3, point_clients_at

TOKEN = "correct-horse-battery-staple"  # noqa: S105  # the test server's token


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[RunningServer]:
    context = ApiContext.build(
        InMemoryBackend().stores(),
        embedder=None,
        clock=SystemClock(),
        settings=ApiSettings(token=TOKEN),
    )
    running = start(Api(context))
    point_clients_at(monkeypatch, running.url, tmp_path)
    yield running
    running.stop()


def signed_scopes(session: Any) -> list[str]:
    """Record the credential scope of every request the session's clients send."""
    seen: list[str] = []

    def capture(request: Any, **_: Any) -> None:
        seen.append(request.headers["Authorization"].decode().split("Credential=")[1].split(",")[0])

    session.events.register("before-send.bedrock-agentcore-control", capture)
    return seen


def test_a_server_with_a_token_refuses_clients_without_it(guarded: RunningServer) -> None:
    client = boto3.session.Session().client("bedrock-agentcore-control")

    with pytest.raises(client.exceptions.AccessDeniedException, match="token"):
        client.list_memories()


def test_use_cairn_sends_the_token(guarded: RunningServer) -> None:
    session = use_cairn(boto3.session.Session(), token=TOKEN)
    client = session.client("bedrock-agentcore-control")

    assert client.list_memories()["memories"] == []


def test_use_cairn_can_sign_for_execute_api(guarded: RunningServer) -> None:
    session = use_cairn(boto3.session.Session(), token=TOKEN, sign_for_execute_api=True)
    scopes = signed_scopes(session)

    session.client("bedrock-agentcore-control").list_memories()

    assert scopes
    assert scopes[0].endswith("/us-east-1/execute-api/aws4_request")


def test_without_the_helper_clients_sign_for_bedrock_agentcore(guarded: RunningServer) -> None:
    session = use_cairn(boto3.session.Session(), token=TOKEN)
    scopes = signed_scopes(session)

    session.client("bedrock-agentcore-control").list_memories()

    assert scopes[0].endswith("/us-east-1/bedrock-agentcore/aws4_request")
