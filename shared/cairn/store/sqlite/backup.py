"""An online backup of the embedded store: SQLite's backup API, safe beside running writers.

``sqlite3.Connection.backup`` copies a consistent snapshot of the file page by page while other
processes keep writing (https://sqlite.org/backup.html): a write committed during the copy
restarts it from the changed pages, so the copy is the store as of one commit. The copy is
checked with ``PRAGMA integrity_check`` before it is reported. Staged rollout payloads (the
``-rollouts`` folder) are transient and not copied: a restored store's unconsumed rollouts
whose payloads are gone are failed with the reason by their next extraction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cairn.errors import ConfigurationError, InvalidInputError

_PAGES_A_STEP = 1024  # 4 MiB at the default page size: writers wait at most one step


def backup_store(source: Path, dest: Path) -> int:
    """Copy the store at ``source`` to the new file ``dest``; the copy's page count.

    ``dest`` must not exist (a backup never overwrites one); on any failure nothing is left at
    ``dest``."""
    if not source.is_file():
        raise ConfigurationError(f"no store at {source}; check --store (or CAIRN_STORE)")
    if dest.exists():
        raise InvalidInputError(f"{dest} exists already; name a new file for the backup")
    if not dest.parent.is_dir():
        raise InvalidInputError(f"{dest.parent} is not a directory; create it first")
    try:
        with _open(f"{source.resolve().as_uri()}?mode=ro") as reading, _open(str(dest)) as copy:
            reading.backup(copy, pages=_PAGES_A_STEP)
            checked = copy.execute("PRAGMA integrity_check").fetchall()
            (pages,) = copy.execute("PRAGMA page_count").fetchone()
        if checked != [("ok",)]:
            raise ConfigurationError(
                f"the backup of {source} failed SQLite's integrity check ({checked[0][0]}); "
                "run `cairn doctor` on the store"
            )
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    return int(pages)


class _open:  # noqa: N801 - a context manager read as a verb
    """A connection closed on exit (``sqlite3``'s own context manager only commits)."""

    def __init__(self, target: str) -> None:
        try:
            self._conn = sqlite3.connect(target, uri=target.startswith("file:"))
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cannot open {target} ({exc})") from exc

    def __enter__(self) -> sqlite3.Connection:
        return self._conn

    def __exit__(self, *_: object) -> None:
        self._conn.close()
