"""``RecordStore`` on DynamoDB: versions appended by one conditional transaction per apply.

Longer than 300 lines because one class implements the ``RecordStore`` port, and its reads
(heads, history, as-of, vectors) share the item decoding its writes (apply, restore, erase)
produce, as the SQLite store's do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    MAX_CONSUMED_ROLLOUTS,
    MAX_SNAPSHOT_RECORDS,
    Change,
    Vector,
)
from cairn.erasure_fence import erases
from cairn.errors import (
    ConflictError,
    ErasedMeanwhileError,
    RecordNotFoundError,
    RecordTakenError,
    SnapshotConflictError,
)
from cairn.models import EmbedderId, Page, RecordVersion, Scope, Status, VersionRef
from cairn.ports import (
    DEFAULT_PAGE_SIZE,
    BuildProgress,
    Clock,
    EraseReport,
    IndexObjectStore,
    IndexRow,
)
from cairn.restoring import plan_restore
from cairn.store.dynamodb.change_feed import (
    commit,
    erased_entries,
    sequence_of,
    written_entries,
)
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    VERSIONS_FROM,
    VERSIONS_UNTIL,
    Item,
    decode_vector,
    decode_version,
    head_sk,
    key,
    number,
    optional_number,
    record_id_of,
    record_versions_prefix,
    s,
    scope_pk,
    text,
    version_sk,
)
from cairn.store.dynamodb.deletion_marks import mark_checks, raise_if_marked
from cairn.store.dynamodb.erasures import (
    Histories,
    LazyHistories,
    erase_histories,
    fence_items,
    forget_actor,
    read_actors,
    read_erasures,
)
from cairn.store.dynamodb.generations import GENERATION_SK
from cairn.store.dynamodb.index_rows import read_head_rows, read_index_rows
from cairn.store.dynamodb.listing import RecordListing
from cairn.store.dynamodb.reembedding import add_head_vectors, extra_attribute, extra_vector
from cairn.store.dynamodb.rollout_consumption import consumption
from cairn.store.dynamodb.writes import Head, apply_transaction, restore_transaction
from cairn.versioning import lineage, plan_writes, successor_checks, touched_ids


class DynamoDBRecordStore:
    """Record versions in the items table; behaves exactly like ``InMemoryRecordStore``."""

    def __init__(
        self,
        db: DynamoDBClient,
        table: str,
        clock: Clock,
        *,
        index_objects: IndexObjectStore | None = None,
    ) -> None:
        self._db = db
        self._table = table
        self._clock = clock
        self._index_objects = index_objects
        self._listing = RecordListing(db, table)

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
        """Append the versions ``changes`` imply and consume the rollouts in one
        TransactWriteItems, all or nothing (with the erasure fence, ``writes`` race 7).

        Requests: one BatchGetItem for the touched heads (and one for the rollouts), one
        TransactWriteItems (none when nothing is written); a conflict costs one more
        BatchGetItem to name what moved.
        """
        pk = scope_pk(scope)
        snapshot = dict(snapshot or {})
        oversized = len(changes) > MAX_CHANGES_PER_APPLY or len(snapshot) > MAX_SNAPSHOT_RECORDS
        # An oversized batch is refused by plan_writes; don't read heads for it first.
        heads, sequence = (
            ({}, None) if oversized else self._heads(pk, [*touched_ids(changes), *snapshot])
        )
        now = self._clock.now()
        current = {rid: head.version for rid, head in heads.items()}
        writes = plan_writes(scope, changes, current, now, snapshot)  # raises before any write
        consumed = consumption(
            self._db, self._table, scope, consume_rollouts, now, limit=MAX_CONSUMED_ROLLOUTS
        )
        if writes or consumed:
            checked = {**successor_checks(changes, current), **snapshot}
            extra = [*consumed, *fence_items(self._table, scope, writes, erasures, erases(changes))]
            extra += mark_checks(self._table, scope.memory_id, deletion_fence)
            versions = [write.version for write in writes]

            def build(feed: Sequence[Item]) -> list[Item]:
                return apply_transaction(self._table, pk, writes, heads, checked, extra, feed)

            try:
                entries = written_entries(versions)
                commit(self._db, self._table, pk, build, entries, now, sequence=sequence)
            except ConflictError as conflict:
                raise_if_marked(self._db, self._table, scope.memory_id, deletion_fence)
                if erasures is not None and (found := self.erasures(scope)) != erasures:
                    raise ErasedMeanwhileError(erasures, found) from conflict
                if isinstance(conflict, SnapshotConflictError):
                    raise self._name_moved(pk, conflict) from conflict
                raise
        return tuple(write.version for write in writes)

    def actors(self, memory_id: str) -> tuple[str, ...]:
        """One Query of the memory's actor markers (``erasures.actor_marker``)."""
        return read_actors(self._db, self._table, memory_id)

    def erasures(self, scope: Scope) -> int:
        """The scope's count of committed erasures (one strongly consistent GetItem)."""
        return read_erasures(self._db, self._table, scope_pk(scope))

    def restore(
        self,
        scope: Scope,
        history: Sequence[RecordVersion],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> tuple[RecordVersion, ...]:
        """Put the record's versions and head in one TransactWriteItems, each conditioned on
        the item not existing, with the actor marker (``actors`` lists the actor; one request)."""
        writes = plan_restore(scope, history, vectors or {})
        pk = scope_pk(scope)
        last = writes[-1].version
        # An erased history is one erasure in the feed; any other, each version it wrote.
        entries = (
            erased_entries([(last.record_id, last.version)])
            if last.status is Status.ERASED
            else written_entries(write.version for write in writes)
        )

        def build(feed: Sequence[Item]) -> list[Item]:
            items = restore_transaction(self._table, pk, writes, feed)
            return items + fence_items(self._table, scope, writes, None, False)  # a marker

        try:
            commit(self._db, self._table, pk, build, entries, self._clock.now())
        except ConflictError as exc:
            raise RecordTakenError(history[0].record_id) from exc
        return tuple(write.version for write in writes)

    def _heads(self, pk: str, record_ids: Sequence[str]) -> tuple[dict[str, Head], int]:
        """The heads of ``record_ids`` and the scope's change sequence (``change_feed``, on
        the generation item), in one strongly consistent BatchGetItem."""
        keys = [key(pk, head_sk(rid)) for rid in dict.fromkeys(record_ids)]
        keys.append(key(pk, GENERATION_SK))
        rows = self._db.batch_get(
            self._table, keys, projection="#sk, #d, #vs, #q", names=_HEAD_NAMES
        )
        sequence = 0
        heads: dict[str, Head] = {}
        for row in rows:
            if text(row, "sk") == GENERATION_SK:
                sequence = sequence_of(row)
                continue
            head = Head(decode_version(row), optional_number(row, "vs"))
            heads[head.version.record_id] = head
        return heads, sequence

    def _name_moved(self, pk: str, conflict: SnapshotConflictError) -> SnapshotConflictError:
        """The same conflict with each record's current head version filled in."""
        keys = [key(pk, head_sk(rid)) for rid, _, _ in conflict.moved]
        rows = self._db.batch_get(self._table, keys, projection="#sk, #v", names=_VERSION_NAMES)
        now = {record_id_of(text(row, "sk")): number(row, "v") for row in rows}
        return SnapshotConflictError([(rid, want, now.get(rid)) for rid, want, _ in conflict.moved])

    def get(self, scope: Scope, record_id: str) -> RecordVersion:
        """The record's head, whatever its status (one GetItem)."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), head_sk(record_id)),
            ConsistentRead=True,
            ProjectionExpression="#d",
            ExpressionAttributeNames={"#d": "d"},
        ).get("Item")
        if found is None:
            raise RecordNotFoundError(record_id)
        return decode_version(found)

    def get_version(self, scope: Scope, record_id: str, version: int) -> RecordVersion:
        """Exactly that version (a tombstone if erased); one Query that also tells a missing
        version of an existing record from a missing record."""
        newest_up_to = self._db.call(
            "query",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={
                ":pk": s(scope_pk(scope)),
                ":low": s(record_versions_prefix(record_id)),
                ":high": s(version_sk(record_id, max(version, 1))),
            },
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
        ).get("Items", [])
        if not newest_up_to:
            raise RecordNotFoundError(record_id)
        if number(newest_up_to[0], "v") != version:
            raise RecordNotFoundError(record_id, version)
        return decode_version(newest_up_to[0])

    def history(self, scope: Scope, record_id: str) -> tuple[RecordVersion, ...]:
        """Every version of the record, oldest first (one Query a 1 MB page)."""
        versions = tuple(self._versions(scope_pk(scope), record_id))
        if not versions:
            raise RecordNotFoundError(record_id)
        return versions

    def _versions(self, pk: str, record_id: str) -> Iterator[RecordVersion]:
        items = self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": s(pk),
                ":prefix": s(record_versions_prefix(record_id)),
            },
            ConsistentRead=True,
        )
        return (decode_version(item) for item in items)

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
        return self._listing.page(
            scope,
            namespace_prefix=namespace_prefix,
            as_of=as_of,
            include_inactive=include_inactive,
            limit=limit,
            cursor=cursor,
        )

    def vectors(
        self, scope: Scope, refs: Sequence[VersionRef], embedder: EmbedderId
    ) -> dict[VersionRef, npt.NDArray[np.float32]]:
        """Stored vectors of those versions made by ``embedder``; missing or foreign are absent.

        One BatchGetItem a hundred refs, plus one for the versions whose bytes live in an
        earlier version of the same record (a fold-in or a revision that kept the words).
        """
        pk = scope_pk(scope)
        wanted = list(dict.fromkeys(refs))
        rows = self._vector_rows(pk, [version_sk(r.record_id, r.version) for r in wanted])
        source: dict[VersionRef, str] = {}
        for ref in wanted:
            row = rows.get(version_sk(ref.record_id, ref.version))
            if row is None or row.get("ek") != s(embedder.key) or "vs" not in row:
                continue
            source[ref] = version_sk(ref.record_id, number(row, "vs"))
        rows |= self._vector_rows(pk, sorted(set(source.values()) - set(rows)))
        found = {
            ref: decode_vector(bytes(rows[sk]["vec"]["B"]), embedder.dims)
            for ref, sk in source.items()
            if sk in rows and "vec" in rows[sk]
        }
        return found | self._extra_vectors(pk, [r for r in wanted if r not in found], embedder)

    def _extra_vectors(
        self, pk: str, refs: Sequence[VersionRef], embedder: EmbedderId
    ) -> dict[VersionRef, npt.NDArray[np.float32]]:
        """Re-embedded vectors, held on head items (``cairn.store.dynamodb.reembedding``)."""
        if not refs:
            return {}
        names = {"#sk": "sk", "#v": "v", "#x": extra_attribute(embedder)}
        heads = self._db.batch_get(
            self._table,
            [key(pk, head_sk(rid)) for rid in sorted({r.record_id for r in refs})],
            projection="#sk, #v, #x",
            names=names,
        )
        by_head = {(str(record_id_of(text(h, "sk"))), number(h, "v")): h for h in heads}
        found = {}
        for ref in refs:
            head = by_head.get((ref.record_id, ref.version))
            vector = extra_vector(head, embedder) if head is not None else None
            if vector is not None:
                found[ref] = vector
        return found

    def add_vectors(self, scope: Scope, vectors: Sequence[tuple[VersionRef, Vector]]) -> int:
        """Vectors of another embedder on live head items, a transaction per 98 with the
        generation bump and their ``re-embedded`` changes (``cairn.store.dynamodb.reembedding``)."""
        return add_head_vectors(self._db, self._table, scope, vectors, self._clock.now())

    def _vector_rows(self, pk: str, sort_keys: Sequence[str]) -> dict[str, Item]:
        if not sort_keys:
            return {}
        rows = self._db.batch_get(
            self._table,
            [key(pk, sk) for sk in sort_keys],
            projection="#sk, #ek, #vs, #vec",
            names={"#sk": "sk", "#ek": "ek", "#vs": "vs", "#vec": "vec"},
        )
        return {text(row, "sk"): row for row in rows}

    def index_rows(
        self, scope: Scope, embedder: EmbedderId | None, progress: BuildProgress | None = None
    ) -> list[IndexRow]:
        """Every active head of ``scope`` by record id with its vector (``IndexRowReader``),
        strongly consistent: ``cairn.store.dynamodb.index_rows``."""
        rows = read_index_rows(self._db, self._table, scope, embedder)
        if progress is not None:  # a Query cannot count ahead: heard once, at the end
            progress(len(rows), len(rows))
        return rows

    def index_rows_of(
        self, scope: Scope, embedder: EmbedderId | None, record_ids: Sequence[str]
    ) -> dict[str, IndexRow]:
        """The rows of those records whose head is active (``HeadRowReader``): BatchGetItem."""
        return read_head_rows(self._db, self._table, scope, embedder, record_ids)

    def erase(self, scope: Scope, record_id: str) -> EraseReport:
        """Tombstone every version of the record and of every record derived from it.

        Requests: one Query per record of the lineage, then one TransactWriteItems per 100
        tombstones. Safe to repeat after a failure: tombstoning a tombstone changes nothing.
        """
        pk = scope_pk(scope)

        def read() -> Histories:
            histories = LazyHistories(lambda rid: list(self._versions(pk, rid)))
            if record_id not in histories:
                raise RecordNotFoundError(record_id)
            return {rid: list(histories[rid]) for rid in lineage(record_id, histories)}

        return self._erase(scope, read)

    def erase_scope(self, scope: Scope) -> EraseReport:
        """Tombstone every record of the scope: one Query over its versions, then
        transactions of up to 100 tombstones."""
        pk = scope_pk(scope)

        def read() -> Histories:
            histories: Histories = {}
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={
                    ":pk": s(pk),
                    ":low": s(VERSIONS_FROM),
                    ":high": s(VERSIONS_UNTIL),
                },
                ConsistentRead=True,
            ):
                histories.setdefault(str(record_id_of(text(item, "sk"))), []).append(
                    decode_version(item)
                )
            return histories

        erased = self._erase(scope, read)
        forget_actor(self._db, self._table, scope)  # after: a racing create is fenced
        return erased

    def _erase(self, scope: Scope, read: Callable[[], Histories]) -> EraseReport:
        """Tombstone what ``read`` returns, then delete the scope's recall index objects (stale
        from the first tombstone on, never served again, but they hold the erased bytes)."""
        erased = erase_histories(self._db, self._table, scope_pk(scope), read, self._clock.now())
        if self._index_objects is not None:
            self._index_objects.erase_scope(scope)
        return erased


_HEAD_NAMES = {"#sk": "sk", "#d": "d", "#vs": "vs", "#q": "q"}
_VERSION_NAMES = {"#sk": "sk", "#v": "v"}
