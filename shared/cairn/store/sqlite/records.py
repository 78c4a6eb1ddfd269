"""``RecordStore`` on SQLite: versions appended under the write lock, heads kept beside them.

Longer than 300 lines because one class implements the ``RecordStore`` port, and its reads
(heads, history, as-of, vectors) share the row decoding its writes produce.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime

import numpy as np
import numpy.typing as npt

from cairn.changes import MAX_CONSUMED_ROLLOUTS, Change, Vector
from cairn.cursor import decode_cursor, encode_cursor
from cairn.erasure_fence import check_fence, erases
from cairn.errors import InvalidCursorError, RecordNotFoundError, RecordTakenError
from cairn.models import EmbedderId, Page, RecordVersion, Scope, Status, VersionRef
from cairn.paging import check_limit
from cairn.ports import (
    DEFAULT_PAGE_SIZE,
    BuildProgress,
    Clock,
    EraseReport,
    IndexRow,
    IndexSnapshotFolder,
)
from cairn.restoring import plan_restore
from cairn.rollout.consumption import plan_consumption
from cairn.row_integrity import listed_versions, read_version, record_id_in
from cairn.store.sqlite.changes import log_erased, log_reembedded, log_writes
from cairn.store.sqlite.codec import decode_vector, encode_time, encode_vector
from cairn.store.sqlite.connection import SQLiteDatabase
from cairn.store.sqlite.generations import bump, check_not_deleting, count_erasure
from cairn.store.sqlite.generations import erasures as scope_erasures
from cairn.store.sqlite.index_rows import count_index_rows, each_index_row, read_index_rows
from cairn.store.sqlite.listing import listing_query
from cairn.store.sqlite.reembedding import add_head_vectors
from cairn.store.sqlite.rollout_rows import save_rollout
from cairn.store.sqlite.rollouts import read_rollouts
from cairn.versioning import Write, lineage, plan_writes, tombstone, touched_ids

# Refs per vector query: two bound parameters each, far below SQLite's 32766-variable limit.
_REFS_PER_QUERY = 400


class SQLiteRecordStore:
    """Record versions in one SQLite file; behaves exactly like ``InMemoryRecordStore``."""

    def __init__(
        self, db: SQLiteDatabase, clock: Clock, snapshots: IndexSnapshotFolder | None = None
    ) -> None:
        self._db = db
        self._clock = clock
        self._snapshots = snapshots

    def apply(
        self,
        scope: Scope,
        changes: Sequence[Change],
        *,
        snapshot: Mapping[str, int] | None = None,
        consume_rollouts: Sequence[str] = (),
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> tuple[RecordVersion, ...]:
        """Append the versions ``changes`` imply and consume the rollouts in one transaction,
        all or nothing."""
        with self._db.transaction(write=True) as conn:
            check_fence(erasures, scope_erasures(conn, scope))
            if deletion_fence:
                check_not_deleting(conn, scope.memory_id)
            wanted = list(dict.fromkeys([*touched_ids(changes), *(snapshot or {})]))
            heads = _heads(conn, scope, wanted)
            now = self._clock.now()
            # Both planners raise (conflict, not found, invalid) before anything is written;
            # the transaction then rolls back an empty change set.
            writes = plan_writes(scope, changes, heads, now, snapshot)
            found = read_rollouts(conn, scope, consume_rollouts[: MAX_CONSUMED_ROLLOUTS + 1])
            consumed = plan_consumption(found, consume_rollouts, now)
            for write in writes:
                _insert(conn, write)
            for rollout in consumed:
                save_rollout(conn, rollout)
            if writes:  # a rollout consumed alone is no record write: the generation stays
                bump(conn, self._db, scope)
            log_writes(conn, scope, [write.version for write in writes], now)
            if erases(changes):
                count_erasure(conn, scope)
            return tuple(write.version for write in writes)

    def actors(self, memory_id: str) -> tuple[str, ...]:
        """Actors of the memory with a head that is not erased."""
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT DISTINCT actor_id FROM record_heads WHERE memory_id = ?"
                " AND status != 'erased' ORDER BY actor_id",
                (memory_id,),
            ).fetchall()
        return tuple(str(row[0]) for row in rows)

    def erasures(self, scope: Scope) -> int:
        """The scope's count of committed erasures (``cairn.erasure_fence``)."""
        with self._db.transaction(write=False) as conn:
            return scope_erasures(conn, scope)

    def restore(
        self,
        scope: Scope,
        history: Sequence[RecordVersion],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> tuple[RecordVersion, ...]:
        """Insert the record's versions as they were, in one transaction, unless it is held."""
        writes = plan_restore(scope, history, vectors or {})
        with self._db.transaction(write=True) as conn:
            held = conn.execute(
                "SELECT 1 FROM record_versions WHERE memory_id = ? AND actor_id = ?"
                " AND record_id = ? LIMIT 1",
                _key(scope, history[0].record_id),
            ).fetchone()
            if held is not None:
                raise RecordTakenError(history[0].record_id)
            for write in writes:
                _insert(conn, write)
            bump(conn, self._db, scope)
            head, now = history[-1], self._clock.now()
            if head.status is Status.ERASED:  # the feed tells an erasure as erase does
                log_erased(conn, scope, [(head.record_id, head.version)], now)
            else:
                log_writes(conn, scope, [write.version for write in writes], now)
        return tuple(write.version for write in writes)

    def get(self, scope: Scope, record_id: str) -> RecordVersion:
        """The record's head, whatever its status; ``RecordNotFoundError`` outside the scope."""
        with self._db.transaction(write=False) as conn:
            heads = _heads(conn, scope, [record_id])
        if record_id not in heads:
            raise RecordNotFoundError(record_id)
        return heads[record_id]

    def get_version(self, scope: Scope, record_id: str, version: int) -> RecordVersion:
        """Exactly that version (a tombstone if erased); ``RecordNotFoundError`` if absent."""
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT data FROM record_versions WHERE memory_id = ? AND actor_id = ?"
                " AND record_id = ? AND version = ?",
                (scope.memory_id, scope.actor_id, record_id, version),
            ).fetchone()
            exists = row is not None or bool(_heads(conn, scope, [record_id]))
        if row is None:
            raise RecordNotFoundError(record_id, version if exists else None)
        return read_version(row[0])

    def history(self, scope: Scope, record_id: str) -> tuple[RecordVersion, ...]:
        """Every version of the record, oldest first."""
        with self._db.transaction(write=False) as conn:
            versions = _history(conn, scope, record_id)
        if not versions:
            raise RecordNotFoundError(record_id)
        return tuple(versions)

    def list_records(
        self,
        scope: Scope,
        *,
        namespace_prefix: str | None = None,
        as_of: datetime | None = None,
        include_inactive: bool = False,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[RecordVersion]:
        """Heads (or the versions current at ``as_of``) by record id, one page at a time."""
        check_limit(limit)
        query = {"ns": namespace_prefix, "as_of": as_of, "inactive": include_inactive}
        after = None
        if cursor is not None:
            after = decode_cursor(str(scope), query, cursor)
            if not isinstance(after, str):
                raise InvalidCursorError(
                    "pagination cursor is malformed; pass back the next token exactly as returned"
                )
        sql, params = listing_query(scope, namespace_prefix, as_of, include_inactive, after)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(sql + " LIMIT ?", (*params, limit + 1)).fetchall()
        items = tuple(listed_versions(scope, (data for (data,) in rows[:limit])))
        more = len(rows) > limit
        # After the last row read, even one skipped as corrupt (it is reported, never served).
        last = record_id_in(rows[limit - 1][0]) if more else None
        next_cursor = (
            encode_cursor(str(scope), query, last or items[-1].record_id) if more else None
        )
        return Page[RecordVersion](items=items, next_cursor=next_cursor)

    def vectors(
        self, scope: Scope, refs: Sequence[VersionRef], embedder: EmbedderId
    ) -> dict[VersionRef, npt.NDArray[np.float32]]:
        """Stored vectors of those versions made by ``embedder``; missing or foreign are absent."""
        wanted = set(refs)
        found: dict[VersionRef, npt.NDArray[np.float32]] = {}
        ordered = sorted(wanted, key=lambda r: (r.record_id, r.version))
        with self._db.transaction(write=False) as conn:
            for start in range(0, len(ordered), _REFS_PER_QUERY):
                chunk = ordered[start : start + _REFS_PER_QUERY]
                for rid, version, dims, blob in _vector_rows(conn, scope, chunk, embedder):
                    found[VersionRef(record_id=rid, version=version)] = decode_vector(blob, dims)
        return found

    def add_vectors(self, scope: Scope, vectors: Sequence[tuple[VersionRef, Vector]]) -> int:
        """Vectors for live heads under another embedder, in one transaction that moves the
        generation and logs a ``re-embedded`` change per vector only if one was stored
        (``cairn.store.sqlite.reembedding``)."""
        with self._db.transaction(write=True) as conn:
            stored = add_head_vectors(conn, scope, vectors)
            if stored:
                bump(conn, self._db, scope)
                log_reembedded(conn, scope, stored, self._clock.now())
        return len(stored)

    def index_rows(
        self, scope: Scope, embedder: EmbedderId | None, progress: BuildProgress | None = None
    ) -> list[IndexRow]:
        """Every active head in record-id order with its vector, in one ordered read, rows
        not re-validated (``cairn.store.sqlite.index_rows``)."""
        with self._db.transaction(write=False) as conn:
            return read_index_rows(conn, scope, embedder, progress)

    @contextmanager
    def index_row_stream(
        self, scope: Scope, embedder: EmbedderId | None
    ) -> Iterator[tuple[int, Iterator[IndexRow]]]:
        """``index_rows`` as a count and a stream, read in one transaction held meanwhile
        (``cairn.store.sqlite.index_rows.each_index_row``)."""
        with self._db.transaction(write=False) as conn:
            yield count_index_rows(conn, scope), each_index_row(conn, scope, embedder)

    def erase(self, scope: Scope, record_id: str) -> EraseReport:
        """Tombstone every version of the record and of every record derived from it.

        With ``secure_delete`` on, the old row bytes are overwritten with zeros in the file,
        and a WAL checkpoint afterwards removes the old page images from the ``-wal`` file;
        then the scope's persisted recall index snapshots are written again without those
        records and the old files overwritten (or, where that cannot be done, destroyed).
        """
        with self._db.transaction(write=True) as conn:
            versions = _ScopeVersions(conn, scope)
            if record_id not in versions:
                raise RecordNotFoundError(record_id)
            erased = lineage(record_id, versions)
            report = _erase(conn, scope, erased, versions)
            bump(conn, self._db, scope)
            log_erased(conn, scope, _heads_of(erased, versions), self._clock.now())
            count_erasure(conn, scope)
        self._db.checkpoint()
        if self._snapshots is not None:  # after the commit: a rebuild racing it sees it moved
            self._snapshots.erase_records(scope, erased)
        return report

    def erase_scope(self, scope: Scope) -> EraseReport:
        """Tombstone every version of every record in the scope (content overwritten in place)."""
        with self._db.transaction(write=True) as conn:
            versions = _ScopeVersions(conn, scope)
            erased = sorted(versions)
            report = _erase(conn, scope, erased, versions)
            bump(conn, self._db, scope)
            log_erased(conn, scope, _heads_of(erased, versions), self._clock.now())
            count_erasure(conn, scope)
        self._db.checkpoint()
        if self._snapshots is not None:  # after the commit: a rebuild racing it sees it moved
            self._snapshots.erase_scope(scope)
        return report


def _heads(conn: sqlite3.Connection, scope: Scope, ids: Sequence[str]) -> dict[str, RecordVersion]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        "SELECT v.data FROM record_heads AS h JOIN record_versions AS v"  # noqa: S608 -- "?" only
        " USING (memory_id, actor_id, record_id, version)"
        f" WHERE h.memory_id = ? AND h.actor_id = ? AND h.record_id IN ({marks})",
        (scope.memory_id, scope.actor_id, *ids),
    ).fetchall()
    versions = (read_version(data) for (data,) in rows)
    return {version.record_id: version for version in versions}


def _history(conn: sqlite3.Connection, scope: Scope, record_id: str) -> list[RecordVersion]:
    rows = conn.execute(
        "SELECT data FROM record_versions WHERE memory_id = ? AND actor_id = ?"
        " AND record_id = ? ORDER BY version",
        (scope.memory_id, scope.actor_id, record_id),
    ).fetchall()
    return [read_version(data) for (data,) in rows]


def _insert(conn: sqlite3.Connection, write: Write) -> None:
    v = write.version
    key = (v.memory_id, v.actor_id, v.record_id)
    conn.execute(
        "INSERT INTO record_versions (memory_id, actor_id, record_id, version, created_at,"
        " status, namespace, content_digest, embedder_key, data)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *key,
            v.version,
            encode_time(v.created_at),
            v.status.value,
            v.namespace,
            v.content_digest,
            v.embedding.key if v.embedding else None,
            v.model_dump_json(),
        ),
    )
    conn.execute(
        "INSERT INTO record_heads (memory_id, actor_id, record_id, version, status, namespace)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id, actor_id, record_id) DO UPDATE SET"
        " version = excluded.version, status = excluded.status, namespace = excluded.namespace",
        (*key, v.version, v.status.value, v.namespace),
    )
    if write.vector is not None:
        embedder = write.vector.embedder
        conn.execute(
            "INSERT OR REPLACE INTO vectors (memory_id, actor_id, record_id, content_digest,"
            " embedder_key, dims, vector) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                *key,
                v.content_digest,
                embedder.key,
                embedder.dims,
                encode_vector(write.vector.values),
            ),
        )


def _vector_rows(
    conn: sqlite3.Connection, scope: Scope, refs: Sequence[VersionRef], embedder: EmbedderId
) -> list[tuple[str, int, int, bytes]]:
    # A version's vector is the one stored for its words (digest) by the embedder asked for,
    # whichever embedder wrote the version (re-embedding adds a second one beside the first).
    # Filter on record_id (a primary-key prefix, so an index lookup) and pick the versions in
    # Python: a row-value `(record_id, version) IN (VALUES ...)` made SQLite scan the whole
    # scope on every call (13.5 s -> 1.7 s to fetch 100k vectors, docs/benchmarks.md).
    wanted = {(r.record_id, r.version) for r in refs}
    ids = sorted({r.record_id for r in refs})
    marks = ", ".join("?" * len(ids))
    rows = [
        row
        for row in conn.execute(
            "SELECT v.record_id, v.version, x.dims, x.vector FROM record_versions AS v"  # noqa: S608
            " JOIN vectors AS x ON x.memory_id = v.memory_id AND x.actor_id = v.actor_id"
            " AND x.record_id = v.record_id AND x.content_digest = v.content_digest"
            " WHERE v.memory_id = ? AND v.actor_id = ? AND x.embedder_key = ?"
            f" AND v.record_id IN ({marks})",
            (scope.memory_id, scope.actor_id, embedder.key, *ids),
        )
        if (row[0], row[1]) in wanted
    ]
    return [(str(r), int(n), int(d), bytes(b)) for r, n, d, b in rows]


class _ScopeVersions(Mapping[str, Sequence[RecordVersion]]):
    """The scope's versions by record id, read lazily: ``lineage`` touches only what it follows."""

    def __init__(self, conn: sqlite3.Connection, scope: Scope) -> None:
        self._conn = conn
        self._scope = scope
        self._loaded: dict[str, list[RecordVersion]] = {}

    def __getitem__(self, record_id: str) -> Sequence[RecordVersion]:
        if record_id not in self._loaded:
            found = _history(self._conn, self._scope, record_id)
            if not found:
                raise KeyError(record_id)
            self._loaded[record_id] = found
        return self._loaded[record_id]

    def __iter__(self) -> Iterator[str]:
        rows = self._conn.execute(
            "SELECT record_id FROM record_heads WHERE memory_id = ? AND actor_id = ?"
            " ORDER BY record_id",
            (self._scope.memory_id, self._scope.actor_id),
        ).fetchall()
        return iter([str(rid) for (rid,) in rows])

    def __len__(self) -> int:
        row = self._conn.execute(
            "SELECT COUNT(*) FROM record_heads WHERE memory_id = ? AND actor_id = ?",
            (self._scope.memory_id, self._scope.actor_id),
        ).fetchone()
        return int(row[0])


def _erase(
    conn: sqlite3.Connection,
    scope: Scope,
    record_ids: list[str],
    versions: Mapping[str, Sequence[RecordVersion]],
) -> EraseReport:
    count = 0
    for rid in record_ids:
        for version in versions[rid]:
            conn.execute(
                "UPDATE record_versions SET data = ?, status = 'erased', embedder_key = NULL"
                " WHERE memory_id = ? AND actor_id = ? AND record_id = ? AND version = ?",
                (tombstone(version).model_dump_json(), *_key(scope, rid), version.version),
            )
            count += 1
        conn.execute(
            "UPDATE record_heads SET status = 'erased' WHERE memory_id = ? AND actor_id = ?"
            " AND record_id = ?",
            _key(scope, rid),
        )
        conn.execute(
            "DELETE FROM vectors WHERE memory_id = ? AND actor_id = ? AND record_id = ?",
            _key(scope, rid),
        )
    return EraseReport(record_ids=tuple(record_ids), versions=count)


def _heads_of(
    record_ids: list[str], versions: Mapping[str, Sequence[RecordVersion]]
) -> list[tuple[str, int]]:
    return [(rid, max(v.version for v in versions[rid])) for rid in record_ids]


def _key(scope: Scope, record_id: str) -> tuple[str, str, str]:
    return (scope.memory_id, scope.actor_id, record_id)
