"""The conditional writes behind ``apply`` and ``erase``, and the race each condition closes.

``apply`` reads the heads it touches, plans with ``cairn.versioning.plan_writes``, then commits
everything in ONE ``TransactWriteItems``: per new version a Put of the version item and a Put of
its record's head, plus a ConditionCheck per snapshot record it does not write (DynamoDB allows
one operation per item in a transaction, so a snapshot record that is also written carries its
snapshot condition on the head Put: ``plan_writes`` already checked the two versions agree).

Item count: a change writes at most two records (supersede), two items each, so 16 changes are
at most 64 items, 32 snapshot checks make 96, the memory's marker of the actor 97, the
scope's generation (``generations``: the recall index's staleness check, moved in the same
transaction, which also carries the scope's change sequence) 98 and the change item
(``change_feed``) 99, under DynamoDB's 100. Vectors add no item: their bytes ride in the version
item that brought them (``codec.version_item``). Consumed rollouts add two items each
(``rollout_consumption``), the erasure fence and the memory's marker of the actor
(``erasures``) one each; a batch over 100 is refused.
A ``SupersedeBy`` successor the batch does not write gets a ConditionCheck like a snapshot
record (race 4): it must still be the live head the plan saw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.errors import InvalidInputError
from cairn.models import RecordVersion, Status
from cairn.store.dynamodb.codec import (
    MAX_TRANSACTION_BYTES,
    MAX_TRANSACTION_ITEMS,
    Item,
    check_item_size,
    encode_vector,
    head_item,
    head_sk,
    key,
    n,
    s,
    version_item,
)
from cairn.versioning import Write, tombstone

# The races the conditions close (DynamoDB evaluates every condition at commit time):
#
# 1. Head Put of a create, ``attribute_not_exists(pk)``: two appliers create the same record id
#    (a redelivered plan, two workers on one proposal). Exactly one commits; the other raises
#    SnapshotConflictError and writes nothing.
# 2. Head Put of a change, ``#v = :want AND #st = :active``: between our read and our commit,
#    another apply moved the head (without the check both would write version n+1 and the
#    later head would hide the earlier version: a lost update), or an erase tombstoned the
#    record (erase keeps version numbers, so only the status shows it; without ``#st`` new
#    content could be appended to an erased record).
# 3. Version Put, ``attribute_not_exists(pk)``: versions are immutable. It never fires while
#    heads and versions are written together; it guarantees no Put ever overwrites history.
# 4. ConditionCheck, ``#v = :want``: a record the planner read but does not change moved
#    before the commit (the snapshot promise holds at commit time, not only at our read).
# 5. Erase, head tombstone Put ``#v = :want``: an apply appended version n+1 after erase read
#    n versions. Without it that version would keep its content; with it erase re-reads and
#    tries again (tombstones are idempotent, so a partial erase is safe to repeat).
# 6. Erase, version tombstone Put ``attribute_exists(pk)``: a tombstone never invents a version.
# 7. The scope's erasure count (``erasures.ERASURES_SK``, ``cairn.erasure_fence``): an apply
#    planned from reads made before an erase, erase_scope or retract checks the count it read,
#    ``#n = :want`` (``attribute_not_exists(#n)`` for 0), in its own transaction, so an erasure
#    that landed
#    between the planner's read and this commit cancels it; a retracting apply adds 1 to it in
#    the same item. Erase adds 1 (one UpdateItem) before it reads what to tombstone, so every
#    apply either committed before the bump (and is tombstoned) or fails this condition.
NAMES = {"#v": "v", "#st": "st"}


@dataclass(frozen=True, slots=True)
class Head:
    """A record's head as read for a write: its version and where its vector bytes live."""

    version: RecordVersion
    vector_source: int | None


def apply_transaction(
    table: str,
    pk: str,
    writes: Sequence[Write],
    heads: Mapping[str, Head],
    snapshot: Mapping[str, int],
    extra: Sequence[Item] = (),
    feed: Sequence[Item] = (),
) -> list[Item]:
    """The TransactItems that commit ``writes`` if every head is still what was read, with
    ``extra`` items (consumed rollouts) and, when records change, ``feed`` (the generation
    and change items, ``change_feed.feed_items``) in the same transaction."""
    items: list[Item] = []
    written: set[str] = set()
    for write in writes:
        version = write.version
        source, vector = _vector_of(write, heads.get(version.record_id))
        new_version = version_item(pk, version, vector=vector, vector_source=source)
        head = head_item(pk, version, vector_source=source)
        items.append(_put(table, new_version, "attribute_not_exists(pk)"))
        if write.expected_head is None:
            items.append(_put(table, head, "attribute_not_exists(pk)"))
        else:
            condition = "#v = :want AND #st = :active"
            values = {":want": n(write.expected_head), ":active": s(Status.ACTIVE.value)}
            items.append(_put(table, head, condition, values))
        written.add(version.record_id)
    for rid, want in sorted(snapshot.items()):
        if rid not in written:
            check = {
                "TableName": table,
                "Key": key(pk, head_sk(rid)),
                "ConditionExpression": "#v = :want",
                "ExpressionAttributeNames": {"#v": "v"},
                "ExpressionAttributeValues": {":want": n(want)},
            }
            items.append({"ConditionCheck": check})
    items.extend(extra)
    if writes:  # records change: so do the scope's generation and feed, in the same commit
        items.extend(feed)
    _check_transaction(items, "the batch", "split the batch into several applies")
    return items


def restore_transaction(
    table: str, pk: str, writes: Sequence[Write], feed: Sequence[Item]
) -> list[Item]:
    """The TransactItems that restore one record's history (``cairn.restoring``): every
    version Put and the head Put conditioned on ``attribute_not_exists(pk)`` (race 1: the
    scope holds the record id, or another restore of it committed first)."""
    items: list[Item] = []
    holders: dict[str, int] = {}  # content digest -> the version holding its vector bytes
    for write in writes:
        version = write.version
        if write.vector is not None:
            holders[version.content_digest] = version.version
        source = holders.get(version.content_digest) if version.embedding is not None else None
        vector = encode_vector(write.vector.values) if write.vector is not None else None
        item = version_item(pk, version, vector=vector, vector_source=source)
        items.append(_put(table, item, "attribute_not_exists(pk)"))
    last = writes[-1].version
    source = holders.get(last.content_digest) if last.embedding is not None else None
    head = head_item(pk, last, vector_source=source)
    items.append(_put(table, head, "attribute_not_exists(pk)"))
    items.extend(feed)  # a restored record is a record write too: generation and feed move
    _check_transaction(items, "the history", "restore a shorter history")
    return items


def _vector_of(write: Write, head: Head | None) -> tuple[int | None, bytes | None]:
    """(vector source version, bytes to store here) for a new version."""
    version = write.version
    if write.vector is not None:
        return version.version, encode_vector(write.vector.values)
    if version.embedding is not None and head is not None:
        # Same words, same embedder as the head (plan_writes keeps ``embedding`` only then):
        # point at the version that holds the bytes instead of copying them.
        return head.vector_source, None
    return None, None


@dataclass(frozen=True, slots=True)
class EraseBatch:
    """One erase transaction's tombstones and the records whose head it tombstones (each is
    one ``erased`` change of the transaction)."""

    items: list[Item]
    heads: list[tuple[str, int]]


def erase_transactions(
    table: str, pk: str, histories: Mapping[str, Sequence[RecordVersion]]
) -> list[EraseBatch]:
    """Transactions tombstoning every version of each record, heads first; the caller adds the
    scope's generation and change items to each (so a recall index built before any of them
    is stale after it, and the feed has the erasure exactly when its head is tombstoned).

    A record's tombstones share one transaction when they fit (98 items, the generation and
    the change item); a record with more versions spans several, its head in the first, so no
    new version can join it meanwhile.
    """
    room = MAX_TRANSACTION_ITEMS - 2
    batches: list[EraseBatch] = []
    current = EraseBatch([], [])
    for versions in histories.values():
        ops = _erase_ops(table, pk, versions)
        if current.items and len(current.items) + len(ops) > room:
            batches.append(current)
            current = EraseBatch([], [])
        current.heads.append((versions[-1].record_id, versions[-1].version))
        while len(ops) > room:
            current.items.extend(ops[:room])
            batches.append(current)
            current = EraseBatch([], [])
            ops = ops[room:]
        current.items.extend(ops)
    if current.items:
        batches.append(current)
    return batches


def _erase_ops(table: str, pk: str, versions: Sequence[RecordVersion]) -> list[Item]:
    last = versions[-1]
    head = head_item(pk, tombstone(last), vector_source=None)
    ops = [_put(table, head, "#v = :want", {":want": n(last.version)})]
    for version in versions:
        stone = version_item(pk, tombstone(version), vector=None, vector_source=None)
        ops.append(_put(table, stone, "attribute_exists(pk)"))
    return ops


def _put(table: str, item: Item, condition: str, values: dict[str, Any] | None = None) -> Item:
    put: dict[str, Any] = {"TableName": table, "Item": item, "ConditionExpression": condition}
    if values:
        put["ExpressionAttributeNames"] = {name: NAMES[name] for name in NAMES if name in condition}
        put["ExpressionAttributeValues"] = values
    return {"Put": put}


def _check_transaction(items: Sequence[Item], what: str, remedy: str) -> None:
    if len(items) > MAX_TRANSACTION_ITEMS:
        raise InvalidInputError(
            f"{what} needs {len(items)} DynamoDB transaction items, more than "
            f"{MAX_TRANSACTION_ITEMS}; {remedy}"
        )
    total = 0
    for item in items:
        ((_, request),) = item.items()
        if "Item" in request:
            total += check_item_size(request["Item"], "a record version", "shorten its body")
    if total > MAX_TRANSACTION_BYTES:
        raise InvalidInputError(
            f"{what} encodes to {total} bytes, over DynamoDB's {MAX_TRANSACTION_BYTES}-byte "
            f"transaction limit; {remedy}"
        )
