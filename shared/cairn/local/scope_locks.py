"""One extraction per scope at a time across every process sharing an embedded store.

Each embedded worker extracts one rollout at a time, but two processes on one SQLite file
(two ``cairn serve``, an agent and the ``cairn`` command) each have their own: both would read
a namespace, neither would see what the other is about to write, and both would file the same
fact, or a second live summary for a session (issue 14, item 2). ``ScopeLocks.hold(scope)``
takes an exclusive ``flock`` on ``<directory>/<scope digest>.lock`` around the read-plan-apply
of one extraction, so the second one plans against what the first wrote and folds into it (or,
for the same rollout, finds its records and writes nothing).

The kernel releases a lock when its process dies, even by SIGKILL: a crash never leaves a scope
locked. Lock files are empty and carry the scope only as a digest. Where ``fcntl`` is missing
(Windows) the lock is a no-op: run one process per store there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cairn.models import Scope
from cairn.rollout.staging_keys import KEY_PREFIX, scope_prefix

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class ScopeLocks:
    """Exclusive per-scope locks held as files under ``directory`` (created on first use)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextmanager
    def hold(self, scope: Scope) -> Iterator[None]:
        """Wait for the scope's lock, hold it for the block, release it (also on error)."""
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        digest = scope_prefix(scope).removeprefix(KEY_PREFIX).rstrip("/")
        fd = os.open(self.directory / f"{digest}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock
