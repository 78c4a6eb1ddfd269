"""Tidying the embedded staging folder at start-up: no conversation text left behind.

Payloads hold conversation text. Two kinds outlive their use when a process is killed at the
wrong moment (issue 14, item 4):

- a temporary file (``.<rollout id>.<hex>.tmp``) whose put never reached its link, and
- the payload of a rollout already consumed, when the process died between marking the rollout
  consumed and deleting its payload -- or of no rollout at all (an evidence payload staged just
  before a crash, before its rollout was stored).

``remove_leftovers`` deletes both. A temporary file is deleted at once when its put's process is
gone (it holds bytes and no process holds the lock a put keeps on it:
``cairn.local.fs_staging.abandoned_temporary``), and otherwise once it is older than
``STALE_AFTER`` by the file's own time; an unindexed payload only once it is that old. So a put
under way in another process on the same store is never touched. A consumed rollout's payload
is deleted at once. Pending and failed rollouts keep theirs (failed ones wait for an operator).

Other processes on the same store go on while this one tidies: a put links its temporary file
and removes it, a worker deletes the payload it consumed, an erase removes a scope's folder. A
file or folder gone between the listing and its turn is no longer anything to tidy, and is
passed over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cairn.local.fs_staging import abandoned_temporary
from cairn.ports import Stores
from cairn.rollout.index import Rollout, RolloutState
from cairn.rollout.staging_keys import KEY_PREFIX, scope_prefix
from cairn.store.sqlite.rollouts import SQLiteRolloutStore

STALE_AFTER = timedelta(minutes=10)

FindRollout = Callable[[str], Sequence[Rollout]]
"""The rollouts with an id, in any scope (``SQLiteRolloutStore.find_in_any_scope``)."""


@dataclass(frozen=True)
class LeftoversRemoved:
    """How many files of each kind were deleted."""

    temporary: int = 0
    consumed: int = 0
    unindexed: int = 0


def tidy_staging(stores: Stores, root: Path) -> LeftoversRemoved:
    """``remove_leftovers`` for the embedded SQLite store (another store: nothing to do)."""
    if not isinstance(stores.rollouts, SQLiteRolloutStore):
        return LeftoversRemoved()
    return remove_leftovers(root, stores.rollouts.find_in_any_scope)


def remove_leftovers(
    root: Path, find: FindRollout, *, now: float | None = None
) -> LeftoversRemoved:
    """Delete the leftovers under the staging folder ``root`` (see the module docstring);
    ``now`` is the wall-clock time the files' ages are measured at (default: now)."""
    at = time.time() if now is None else now
    stale_before = at - STALE_AFTER.total_seconds()
    counts = {"temporary": 0, "consumed": 0, "unindexed": 0}
    base = root / KEY_PREFIX.rstrip("/")
    if not base.is_dir():
        return LeftoversRemoved()
    for directory in (d for d in base.iterdir() if d.is_dir()):
        try:
            paths = list(directory.iterdir())
        except FileNotFoundError:
            continue  # the scope was erased by another process meanwhile
        for path in paths:
            kind = _leftover(path, directory.name, find, stale_before)
            if kind is not None:
                path.unlink(missing_ok=True)
                counts[kind] += 1
    return LeftoversRemoved(**counts)


def _leftover(path: Path, digest: str, find: FindRollout, stale_before: float) -> str | None:
    """The kind of leftover ``path`` is, or ``None`` to keep it (or when it is gone)."""
    try:
        old = path.stat().st_mtime < stale_before
    except FileNotFoundError:
        return None  # linked and removed, or deleted, by another process meanwhile
    if path.name.startswith("."):
        temporary = path.name.endswith(".tmp")
        return "temporary" if temporary and (old or abandoned_temporary(path)) else None
    here = [r for r in find(path.name) if scope_prefix(r.scope) == f"{KEY_PREFIX}{digest}/"]
    if not here:
        return "unindexed" if old else None
    return "consumed" if here[0].state is RolloutState.CONSUMED else None
