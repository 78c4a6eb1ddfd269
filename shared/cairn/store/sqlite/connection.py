"""One SQLite connection shared by a backend's stores: pragmas, transactions, error translation.

Thread model: one ``sqlite3`` connection per backend, opened with ``check_same_thread=False``
and guarded by a re-entrant lock that every store call holds for its whole transaction. Calls
from many threads are therefore serialised inside one process; parallelism across processes
comes from WAL (one writer, any number of readers, readers never blocked by the writer).

Durability: ``synchronous=FULL``. In WAL mode NORMAL already survives a *process* crash (the
commit is in the WAL file, in the OS page cache), but can lose the last commits on power loss
or an OS crash because the WAL is not fsynced per commit. FULL fsyncs the WAL at every commit,
so an acknowledged write survives both. Memory writes are a few per conversational turn; one
fsync each is cheap next to an embedding or a model call.

The one exception is the recall journal (``SQLiteJournalStore.put``), which runs on every
recall, where an fsync (1-3 ms) would be a fifth of a warm recall: its commit is NORMAL (the
connection is switched before a write transaction only when the level it needs differs from
the last write's, so recalls in a row pay no pragma and every other write still commits at
FULL). What that can lose, exactly: nothing on a crash of the process (the commit is in the
WAL, in the OS page cache, before the block is returned); on power loss or an OS crash, the
journal entries committed since the last fsynced commit to the file (any record, event or
rollout write, which fsyncs the whole WAL before it) or the last checkpoint.

Errors: ``sqlite3`` errors are translated here, by result code and never by message text:
busy or locked -> ``StoreUnavailableError`` (retryable); a constraint that fired -> the state
moved under us, ``ConflictError``; a file that is not a database, unreadable or read-only ->
``ConfigurationError``; any other engine failure -> ``StoreUnavailableError``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from cairn.errors import CairnError, ConfigurationError, ConflictError, StoreUnavailableError
from cairn.store.sqlite.read_only import cannot_write, open_read_only, require_current
from cairn.store.sqlite.schema import apply_migrations, known_migrations, refuse_foreign

log = logging.getLogger(__name__)

_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_CONSTRAINT = frozenset({sqlite3.SQLITE_CONSTRAINT})
_UNUSABLE_FILE = frozenset(
    {
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_AUTH,
    }
)


def translate(exc: sqlite3.Error, where: Path) -> CairnError | None:
    """The cairn error for an engine error; ``None`` for misuse of the driver (a cairn bug)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    name = getattr(exc, "sqlite_errorname", str(code))
    primary = code & 0xFF  # extended result codes keep the primary code in the low byte
    if primary in _BUSY:
        return StoreUnavailableError(
            f"the SQLite store at {where} is locked by another writer ({name}); retry shortly"
        )
    if primary in _CONSTRAINT:
        return ConflictError(
            f"the SQLite store at {where} changed under this write ({name}); re-read and retry"
        )
    if primary == sqlite3.SQLITE_READONLY:
        return ConfigurationError(
            f"the SQLite store at {where} is read-only for this process: commands that only "
            "read it (history, as-of, ls, stats, export, replay) work, but this one writes "
            "(recall journals what it returns); give write access to the file and its directory"
        )
    if primary in _UNUSABLE_FILE:
        return ConfigurationError(
            f"the SQLite store at {where} cannot be used ({name}: {exc}); check that the path "
            "is a cairn database that this process may read and write"
        )
    return StoreUnavailableError(f"the SQLite store at {where} failed ({name}: {exc})")


@contextmanager
def translated_errors(where: Path) -> Iterator[None]:
    """Re-raise ``sqlite3`` errors raised inside as cairn errors (``raise ... from``)."""
    try:
        yield
    except sqlite3.Error as exc:
        error = translate(exc, where)
        if error is None:
            raise
        raise error from exc


class SQLiteDatabase:
    """The open database file: one connection, its lock, and the transactions over it."""

    def __init__(self, path: Path, *, busy_timeout: float, now: Callable[[], str]) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot create the directory for the SQLite store at {path} ({exc.strerror}); "
                "choose a writable location"
            ) from exc
        self.read_only = False
        with translated_errors(path):
            try:
                conn = _open_writable(path, busy_timeout, now)
            except sqlite3.Error as exc:
                if not (path.is_file() and cannot_write(exc)):
                    raise
                # Readers of a store this process cannot write (cairn.store.sqlite.read_only).
                conn = open_read_only(path, busy_timeout)
                try:
                    refuse_foreign(conn, str(path))
                    require_current(conn, known_migrations(), str(path))
                except BaseException:
                    conn.close()
                    raise
                self.read_only = True
        self._conn: sqlite3.Connection | None = conn
        # The ``synchronous`` level ``_commit_at`` last set (none yet: the first write sets its
        # own); nothing else moves it once the file is open.
        self._synchronous: str | None = None
        # Record writes this connection has begun (cairn.store.sqlite.generations.bump).
        self.record_writes = 0
        # Quarantine list writes this connection has begun (cairn.store.sqlite.quarantine).
        self.quarantine_writes = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ConfigurationError(
                f"the SQLite store at {self.path} is closed; open a new SQLiteBackend"
            )
        return self._conn

    @contextmanager
    def transaction(self, *, write: bool, fsync: bool = True) -> Iterator[sqlite3.Connection]:
        """A transaction that commits if the block returns and rolls back if it raises.

        A write transaction takes the file's write lock up front (``BEGIN IMMEDIATE``), so what
        it reads stays true until it commits; a read transaction is one consistent snapshot.
        ``fsync=False`` commits at ``synchronous=NORMAL``: the commit survives a crash of the
        process at once, and power loss from the next fsynced commit or checkpoint on (see
        the module docstring).
        """
        with self._lock, translated_errors(self.path):
            conn = self._connection()
            if write:
                self._commit_at(conn, "FULL" if fsync else "NORMAL")
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN DEFERRED")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    # The original error is the one worth reporting; a failed rollback is
                    # undone by SQLite itself when the connection next starts a transaction.
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _commit_at(self, conn: sqlite3.Connection, level: str) -> None:
        """Set ``synchronous`` for the next commit, only when it is not already at ``level``:
        recalls in a row journal without a pragma round trip each, and every write still
        commits at the level it asked for (a read commits nothing)."""
        if self._synchronous != level:
            conn.execute(f"PRAGMA synchronous={level}")
            self._synchronous = level

    def data_version(self) -> tuple[int, int]:
        """``PRAGMA data_version`` (moves when another connection commits) and the count of
        record writes this connection has begun: together they move with every record write."""
        with self._lock, translated_errors(self.path):
            (version,) = self._connection().execute("PRAGMA data_version").fetchone()
            return int(version), self.record_writes

    def quarantine_epoch(self) -> tuple[int, int]:
        """``PRAGMA data_version`` and the count of quarantine list writes this connection has
        begun: together they move with every change to the list."""
        with self._lock, translated_errors(self.path):
            (version,) = self._connection().execute("PRAGMA data_version").fetchone()
            return int(version), self.quarantine_writes

    def checkpoint(self) -> bool:
        """Copy the WAL into the file and truncate it; ``False`` if readers held it back.

        After an erase this is what removes the old page images (which still hold the erased
        content) from the ``-wal`` file. Readers of an older snapshot can delay it; the bytes
        then leave at the next checkpoint, at the latest when the last connection closes.
        """
        with self._lock, translated_errors(self.path):
            busy, _, _ = self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            log.warning("WAL checkpoint after erase deferred: another connection is reading")
        return not busy

    def close(self) -> None:
        """Close the connection; later calls raise ``ConfigurationError``. Idempotent."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                with translated_errors(self.path):
                    conn.close()


def _switch_to_wal(conn: sqlite3.Connection, busy_timeout: float) -> str:
    """The journal mode after asking for WAL. Two processes opening a new file at once can get
    "database is locked" here at once, without SQLite waiting its busy timeout (the switch
    needs the file to itself), so the switch is tried again until that timeout has passed."""
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _open_writable(path: Path, busy_timeout: float, now: Callable[[], str]) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        # Before any pragma: switching to WAL would already rewrite the file's header.
        refuse_foreign(conn, str(path))
        _configure(conn, path, busy_timeout)
        apply_migrations(conn, known_migrations(), now, str(path))
    except BaseException:
        conn.close()
        raise
    return conn


def _configure(conn: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    mode = _switch_to_wal(conn, busy_timeout)
    if str(mode).lower() != "wal":
        raise ConfigurationError(
            f"the SQLite store at {path} cannot use write-ahead logging (journal mode "
            f"{mode!r}); put it on a local filesystem"
        )
    conn.execute("PRAGMA synchronous=FULL")  # see the module docstring: survive power loss too
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={max(0, int(busy_timeout * 1000))}")
    # Deleted or rewritten content is overwritten with zeros in the file, not just unlinked,
    # so an erase is real: https://sqlite.org/pragma.html#pragma_secure_delete
    conn.execute("PRAGMA secure_delete=ON")
