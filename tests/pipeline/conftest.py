"""Fixtures of the pipeline tests: the deployment in moto with the functions' composition root
pointed at it, and the embedded store with its worker, both on one settable clock."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, wire_embedded
from cairn.store.sqlite import SQLiteBackend
from tests.pipeline.aws import REGION, Deployment, LambdaRuntime, create_deployment

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")


class SwitchableModel:
    """The offline heuristic extractor, or whatever a fault test puts in its place."""

    def __init__(self) -> None:
        self.inner: Any = offline_model()

    def complete(self, request: Any) -> Any:
        return self.inner.complete(request)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def model() -> SwitchableModel:
    return SwitchableModel()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def session() -> Iterator[Any]:
    with moto.mock_aws():
        yield boto3.session.Session(
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
            region_name=REGION,
        )


@pytest.fixture
def deployment(
    session: Any,
    monkeypatch: pytest.MonkeyPatch,
    clock: FixedClock,
    model: SwitchableModel,
    embedder: HashingEmbedder,
) -> Iterator[Deployment]:
    """The resources in moto and the functions' wiring pointed at them."""
    created = create_deployment(session)
    for name, value in created.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    from functions._common import wiring

    wiring.configure(session=session, model=model, embedder=embedder, clock=clock)
    yield created
    wiring.configure()


@pytest.fixture
def extraction_lambda(deployment: Deployment, session: Any) -> LambdaRuntime:
    handler = importlib.import_module("functions.extraction.handler")
    return LambdaRuntime(session.client("sqs"), deployment, handler.lambda_handler)


@pytest.fixture
def sweep_lambda(deployment: Deployment) -> Any:
    return importlib.import_module("functions.sweep.handler").lambda_handler


@pytest.fixture
def embedded(
    tmp_path: Path, clock: FixedClock, model: SwitchableModel, embedder: HashingEmbedder
) -> Iterator[EmbeddedExtraction]:
    """The SQLite store, payloads on disk and a worker driven by ``run_once`` (no thread)."""
    stores = SQLiteBackend(tmp_path / "cairn.db", clock).stores()
    wired = wire_embedded(
        stores,
        FilesystemStagingStore(tmp_path / "cairn.db-rollouts"),
        model=model,
        embedder=embedder,
        clock=clock,
    )
    yield wired
    wired.close()
