"""cairn.store.sqlite: the public names, re-exported from ``cairn.store.sqlite.backend``."""

from cairn.store.sqlite.backend import (
    SQLiteBackend,
)

__all__ = [
    "SQLiteBackend",
]
