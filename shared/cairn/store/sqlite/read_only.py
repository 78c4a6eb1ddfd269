"""Opening a store this process cannot write: a read-only file, or one in a read-only directory.

SQLite opens a read-only file read-only by itself, but a store in write-ahead-log mode also
needs its ``-shm`` index beside it; in a directory nobody may write, that cannot be made, and
the open fails. Then the file is opened ``mode=ro``, and failing that ``immutable=1`` (SQLite
reads it as a file nothing changes, which holds where nobody may write). A read-only store must
already be at this cairn's schema: it cannot be migrated.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from cairn.errors import ConfigurationError
from cairn.store.sqlite.schema import Migration, applied_versions

CANNOT_WRITE = frozenset({sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})


def cannot_write(exc: sqlite3.Error) -> bool:
    """Whether the engine failed because the file or its directory is not writable."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in CANNOT_WRITE


def open_read_only(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A read-only connection to the store at ``path`` (``mode=ro``, else ``immutable=1``)."""
    base = f"file:{quote(str(path.resolve()))}?mode=ro"
    for uri in (base, base + "&immutable=1"):
        conn = sqlite3.connect(
            uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            conn.close()
            if not cannot_write(exc) or uri.endswith("immutable=1"):
                raise
            continue
        return conn
    raise AssertionError("unreachable: the last attempt returns or raises")


def require_current(conn: sqlite3.Connection, known: list[Migration], where: str) -> None:
    """``ConfigurationError`` unless every known migration is already applied."""
    missing = sorted({m.version for m in known} - set(applied_versions(conn)))
    if missing:
        raise ConfigurationError(
            f"the SQLite store at {where} is read-only and was written by an older cairn "
            f"(schema migration {missing[0]} not applied); open it once with write access to "
            "bring it up to date"
        )
