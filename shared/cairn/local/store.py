"""The embedded store as the apps on one machine use it (the ``cairn`` command, ``cairn serve``,
the demos): where it lives by default, opening it, where a record is filed when no namespace is
given, reading a scope back whole, and how a record's source is named in text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from cairn.errors import ConfigurationError
from cairn.local.paths import default_store_path
from cairn.models import RecordVersion, Scope, Source
from cairn.ports import MAX_PAGE_SIZE, Clock, Stores
from cairn.quarantine import Quarantine

__all__ = [
    "all_records",
    "default_namespace",
    "default_store_path",
    "describe_source",
    "open_store",
    "with_compaction",
]


def open_store(path: Path, clock: Clock, *, create: bool) -> Stores:
    """The embedded SQLite store at ``path``; a missing file is created only if ``create``."""
    if not create and not path.exists():
        raise ConfigurationError(
            f"no store at {path}: nothing has been remembered there yet; check --store "
            "(or CAIRN_STORE), or write to it first with `cairn remember`"
        )
    from cairn.store.sqlite import SQLiteBackend  # sqlite3 loads only when a store is used

    path.parent.mkdir(parents=True, exist_ok=True)
    return with_compaction(SQLiteBackend(path, clock).stores())


def with_compaction(stores: Stores) -> Stores:
    """``stores`` whose erasures write the recall index files again without the erased rows
    (``cairn.recall.index.compact``), rather than destroying them for the next recall to
    rebuild, even in a process that never recalls (``cairn erase``)."""
    if stores.index_snapshots is not None:
        stores.index_snapshots.use_compactor(_compact_file)
    return stores


def _compact_file(path: Path, record_ids: Collection[str]) -> Sequence[bytes | memoryview] | bool:
    from cairn.recall.index.compact import compact_file  # numpy loads only when an erase runs

    return compact_file(path, record_ids)


def default_namespace(category: str, actor_id: str) -> str:
    """``/preferences/<actor>/`` for preferences, ``/facts/<actor>/`` for everything else."""
    kind = "preferences" if category == "preference" else "facts"
    return f"/{kind}/{actor_id}/"


def all_records(stores: Stores, scope: Scope, **filters: Any) -> list[RecordVersion]:
    """Every page of ``list_records`` with those filters, in record id order."""
    found: list[RecordVersion] = []
    cursor: str | None = None
    while True:
        page = stores.records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor, **filters)
        found.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return found


def describe_source(source: Source) -> str:
    """``user (event 1#ab, session s1)``: the kind, then whatever ids it cites."""
    cited = [
        f"{label} {value}"
        for label, value in (
            ("event", source.event_id),
            ("session", source.session_id),
            ("rollout", source.rollout_id),
            ("run", source.run_id),
            ("speaker_id", source.speaker_id),
        )
        if value
    ]
    return source.kind.value + (f" ({', '.join(cited)})" if cited else "")


def read_now(
    stores: Stores, scope: Scope, versions: Sequence[RecordVersion]
) -> tuple[RecordVersion, ...]:
    """``versions`` labelled as read now: those with a source the memory's quarantine list
    holds shown untrusted (``cairn.quarantine``); the store keeps them as they were."""
    if stores.quarantine is None:
        return tuple(versions)
    quarantine = Quarantine(stores.quarantine.entries(scope.memory_id))
    return tuple(quarantine.view(version) for version in versions)
