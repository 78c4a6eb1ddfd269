"""The embedded default backend: every store in one SQLite file, safe across processes.

``SQLiteBackend(path).stores()`` gives a ``RecordStore``, an ``EventStore`` and a
``JournalStore`` that behave exactly like the in-memory reference (``tests/conformance`` runs
both) and keep everything on disk.

- One file, write-ahead logging: one writer process and any number of reader processes; a
  reader sees the last committed state and is never blocked by the writer. A writer that cannot
  get the lock within ``busy_timeout`` seconds gets ``StoreUnavailableError`` (retryable).
- Acknowledged writes survive a process crash and power loss (``synchronous=FULL``; see
  ``cairn.store.sqlite.connection`` for why not NORMAL). Recall journal entries survive a
  process crash; on power loss, those since the last other write can be lost (same module).
- Inside one process the backend's stores share one connection behind a lock, so they may be
  used from any thread; calls are serialised.
- Schema changes are numbered migrations (``cairn/store/migrations/``), recorded in
  ``schema_migrations`` and applied once each when the file is opened. A file written by a newer
  cairn is refused with ``ConfigurationError``.
- Recall keeps an index of each scope's live heads in process (``cairn.recall.index``),
  current by a generation per scope that every record write bumps in its own transaction, and
  by ``PRAGMA data_version``: a write by another process is seen on the next recall.
  Each scope's index is also persisted in the folder ``<file>-recall-index`` beside the file
  (``cairn.store.snapshot_folder``): a fresh process maps it instead of rebuilding it, when its
  stamp is the scope's current generation. A read-only store writes none.
- Erase is real: ``secure_delete`` overwrites erased and deleted content with zeros in the file,
  each erase ends with a WAL checkpoint that truncates the ``-wal`` file, and then overwrites
  and deletes the scope's persisted index snapshots.
"""

from __future__ import annotations

from pathlib import Path

from cairn.clock import SystemClock
from cairn.models import Scope
from cairn.ports import Clock, Stores
from cairn.store.snapshot_folder import SnapshotFolder
from cairn.store.sqlite.api_state import (
    SQLiteIdempotencyStore,
    SQLiteMemoryConfigStore,
    SQLiteRecordDirectory,
)
from cairn.store.sqlite.changes import SQLiteChangeFeed
from cairn.store.sqlite.chunks import SQLiteChunkStore
from cairn.store.sqlite.codec import encode_time
from cairn.store.sqlite.connection import SQLiteDatabase
from cairn.store.sqlite.events import SQLiteEventStore
from cairn.store.sqlite.generations import SQLiteHistoryGenerations, SQLiteRecordGenerations
from cairn.store.sqlite.inventory import ScopeCounts, count_scopes, erased_record_ids
from cairn.store.sqlite.jobs import SQLiteJobLog
from cairn.store.sqlite.journal import SQLiteJournalStore
from cairn.store.sqlite.links import SQLiteAccessCounts, SQLiteLinkStore
from cairn.store.sqlite.quarantine import SQLiteQuarantineList
from cairn.store.sqlite.records import SQLiteRecordStore
from cairn.store.sqlite.rollouts import SQLiteRolloutStore

__all__ = ["SQLiteBackend", "SQLiteEventStore", "SQLiteJournalStore", "SQLiteRecordStore"]

DEFAULT_BUSY_TIMEOUT = 5.0


def snapshot_folder_of(path: Path) -> Path:
    """The folder of the store at ``path``'s persisted recall index snapshots, beside it."""
    return path.with_name(path.name + "-recall-index")


class SQLiteBackend:
    """Records, events and the recall journal in the SQLite file at ``path``.

    Opening creates the file (and its directory) if missing and brings its schema up to date;
    ``close`` releases it, after which its stores raise ``ConfigurationError``.
    """

    def __init__(
        self,
        path: Path | str,
        clock: Clock | None = None,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        self.path = Path(path).expanduser()
        self.clock: Clock = clock or SystemClock()
        self._db = SQLiteDatabase(
            self.path, busy_timeout=busy_timeout, now=lambda: encode_time(self.clock.now())
        )
        self.snapshots = SnapshotFolder(
            snapshot_folder_of(self.path), writable=not self._db.read_only
        )
        self._records = SQLiteRecordStore(self._db, self.clock, self.snapshots)
        self._generations = SQLiteRecordGenerations(self._db)
        self._history_generations = SQLiteHistoryGenerations(self._db)

    def generations(self) -> SQLiteRecordGenerations:
        """The record generations a recall index checks (``cairn.ports.RecordGenerations``)."""
        return self._generations

    def stores(self) -> Stores:
        """The backend's stores, sharing its connection; closing the bundle closes the backend."""
        return Stores(
            records=self._records,
            events=SQLiteEventStore(self._db, self.clock),
            journal=SQLiteJournalStore(self._db),
            owner=self,
            memories=SQLiteMemoryConfigStore(self._db),
            idempotency=SQLiteIdempotencyStore(self._db),
            directory=SQLiteRecordDirectory(self._db),
            rollouts=SQLiteRolloutStore(self._db, self.clock),
            chunks=SQLiteChunkStore(self._db),
            jobs=SQLiteJobLog(self._db),
            quarantine=SQLiteQuarantineList(self._db),
            generations=self._generations,
            history_generations=self._history_generations,
            changes=SQLiteChangeFeed(self._db),
            index_snapshots=self.snapshots,
            links=SQLiteLinkStore(self._db),
            access=SQLiteAccessCounts(self._db),
        )

    def inventory(self, memory_id: str | None = None) -> list[ScopeCounts]:
        """What the file holds, per ``(memory, actor)`` (``cairn.store.sqlite.inventory``)."""
        return count_scopes(self._db, memory_id)

    def erased_records(self, scope: Scope) -> list[str]:
        """The ids of the scope's erased records, sorted (their tombstones stay readable
        through ``history``; no listing shows them)."""
        return erased_record_ids(self._db, scope.memory_id, scope.actor_id)

    def close(self) -> None:
        """Release the file; idempotent."""
        self._db.close()

    def __enter__(self) -> SQLiteBackend:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
