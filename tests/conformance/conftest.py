"""Fixtures: a settable clock and one fresh ``Stores`` per backend in ``backends.BACKENDS``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.ports import StagingStore, Stores
from tests.conformance.backends import BACKENDS, PERSISTENT, open_backend
from tests.conformance.erasure_scan import backend_staging


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture(params=sorted(BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def stores(backend_name: str, clock: FixedClock, tmp_path: Path) -> Iterator[Stores]:
    opened = open_backend(backend_name, clock, tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def persistent_backend(backend_name: str) -> str:
    """The backend's name, or a skip when it keeps nothing across reopen (a capability)."""
    if backend_name not in PERSISTENT:
        pytest.skip(f"backend {backend_name!r} does not persist across reopen")
    return backend_name


@pytest.fixture
def staging(backend_name: str, stores: Stores, tmp_path: Path) -> Iterator[StagingStore]:
    """The staging store deployments of this backend use (``erasure_scan.backend_staging``);
    after ``stores``, so moto is active."""
    yield from backend_staging(backend_name, tmp_path)
