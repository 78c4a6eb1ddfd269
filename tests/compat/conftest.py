"""Real AgentCore clients against ``cairn serve`` on loopback: no mocks on the client side.

One server per test session (a thread on a free loopback port, a fresh SQLite store, the local
ONNX embedder, extraction by the offline heuristic model in a worker thread), as ``cairn serve``
runs it. The suite runs with the two endpoint environment
variables, fake credentials and region us-east-1 set and nothing else, exactly what a user
would set; tests isolate themselves by creating their own memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.api import ApiSettings
from cairn.api.server import RunningServer, start
from cairn.clock import SystemClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.local import offline_model
from cairn.local.api import EmbeddedApi, serve_embedded
from cairn.store.sqlite import SQLiteBackend

boto3 = pytest.importorskip("boto3")

_ISOLATED_ENV = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "BEDROCK_AGENTCORE_CONTROL_ENDPOINT",
)


@pytest.fixture(scope="session")
def served_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedApi]:
    """The store behind the server, with its extraction worker (``worker.drain()`` waits)."""
    path = tmp_path_factory.mktemp("serve") / "cairn.db"
    clock = SystemClock()
    embedded = serve_embedded(
        SQLiteBackend(path, clock).stores(),
        path,
        embedder=OnnxEmbedder(),
        model=offline_model(),
        clock=clock,
        settings=ApiSettings(),
    )
    yield embedded
    embedded.close()


@pytest.fixture(scope="session")
def served(served_store: EmbeddedApi) -> Iterator[RunningServer]:
    running = start(served_store.api)
    yield running
    running.stop()


def point_clients_at(monkeypatch: pytest.MonkeyPatch, url: str, home: Path) -> None:
    """What a user does to switch: two endpoint variables (plus fake credentials here)."""
    for name in _ISOLATED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE", url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL", url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDCAIRNTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    # Never read the developer's own AWS configuration.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "aws-credentials"))


@pytest.fixture(scope="session")
def compat_env(served: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The environment for the whole suite: clients made anywhere in it reach ``served``."""
    with pytest.MonkeyPatch.context() as patch:
        point_clients_at(patch, served.url, tmp_path_factory.mktemp("aws-home"))
        yield served.url


@pytest.fixture
def agentcore_env(compat_env: str) -> str:
    return compat_env


@pytest.fixture(scope="session")
def boto3_session(compat_env: str) -> Any:
    """One boto3 session: botocore loads each service model once, not once per test."""
    return boto3.session.Session()


@pytest.fixture(scope="session")
def data_plane(boto3_session: Any) -> Any:
    return boto3_session.client("bedrock-agentcore")


@pytest.fixture(scope="session")
def control_plane(boto3_session: Any) -> Any:
    return boto3_session.client("bedrock-agentcore-control")


def unique_name(prefix: str = "mem") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


SEMANTIC_TEMPLATE = "/strategies/{memoryStrategyId}/actors/{actorId}/"


@pytest.fixture
def memory(control_plane: Any) -> dict[str, Any]:
    """A fresh memory with a semantic strategy filing records under the actor's namespace."""
    created = control_plane.create_memory(
        name=unique_name(),
        eventExpiryDuration=30,
        memoryStrategies=[
            {
                "semanticMemoryStrategy": {
                    "name": "facts",
                    "namespaceTemplates": ["/facts/{actorId}/"],
                }
            }
        ],
    )
    found: dict[str, Any] = created["memory"]
    return found
