"""The backends the conformance suite runs against, and what each can do.

Each factory opens a fresh backend over ``path`` (a directory it may use as it likes) and
returns its ``Stores``. Backend modules are imported inside the factory, so a backend that is
broken or missing fails its own tests with a clear message instead of the whole suite at
collection. A new backend joins by adding one entry here; the tests do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cairn.ports import Clock, Stores

Factory = Callable[[Clock, Path], Stores]


def open_memory(clock: Clock, path: Path) -> Stores:
    from cairn.store.memory import InMemoryBackend

    return InMemoryBackend(clock).stores()


def open_sqlite(clock: Clock, path: Path) -> Stores:
    from cairn.store.sqlite import SQLiteBackend

    return SQLiteBackend(path / "cairn.db", clock).stores()


BACKENDS: dict[str, Factory] = {
    "memory": open_memory,
    "sqlite": open_sqlite,
}

# Optional capability: opening the factory again on the same path sees what was written before.
PERSISTENT: frozenset[str] = frozenset({"sqlite"})


def open_backend(name: str, clock: Clock, path: Path) -> Stores:
    """Open backend ``name``; a missing cairn module fails, a missing third-party extra skips."""
    try:
        return BACKENDS[name](clock, path)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "cairn":
            pytest.fail(f"backend {name!r} cannot be imported: {exc}")
        pytest.skip(f"backend {name!r} needs {exc.name!r}, which is not installed")
