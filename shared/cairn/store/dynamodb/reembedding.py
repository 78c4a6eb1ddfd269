"""More vectors for the live heads of a DynamoDB scope, under another embedder (``VectorWriter``).

A version item holds at most one vector, its own embedder's (``vec``), so a second embedder's
vector goes on the head item, in an attribute named for the embedder (``x:<model>@<dims>``):
the head item is what the recall index reads first anyway (``index_rows``), and every write that
moves the head Puts a whole new head item, which drops the attribute. An erase therefore
destroys it with the record, and a new version (even one keeping the words) starts without it:
recall re-embeds that head on demand until the next ``cairn reindex`` stores it again.

Each batch is one transaction: the updates, each conditioned on the head still being that
version, active and without the attribute, the generation bump and the change item with one
``re-embedded`` change per update (``change_feed.commit``: the scope's sequence moves in the
same transaction, so a follower of the feed re-reads those heads). If a head moved meanwhile
the transaction fails whole, and the batch is read and sent again without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import pydantic_core

from cairn.changes import Vector
from cairn.errors import ConflictError
from cairn.models import EmbedderId, Scope, Status, VersionRef
from cairn.store.dynamodb.change_feed import Entry, commit
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    Item,
    decode_vector,
    encode_vector,
    head_sk,
    key,
    n,
    number,
    s,
    scope_pk,
    text,
)

EXTRA = "x:"  # the head-item attribute prefix of a re-embedded vector
# TransactWriteItems takes 100 items; two are the generation bump and the change item.
_PER_TRANSACTION = 98
_ROUNDS = 5


def extra_attribute(embedder: EmbedderId) -> str:
    return EXTRA + embedder.key


def extra_vector(item: Item, embedder: EmbedderId) -> Any:
    """The head item's re-embedded vector of ``embedder``, or ``None``."""
    blob = item.get(extra_attribute(embedder))
    return decode_vector(bytes(blob["B"]), embedder.dims) if blob is not None else None


def add_head_vectors(
    db: DynamoDBClient,
    table: str,
    scope: Scope,
    vectors: Sequence[tuple[VersionRef, Vector]],
    at: datetime,
) -> int:
    """Store each vector on its ref's head item if the ref is the live head and neither the
    head nor its version holds a vector of that embedder; how many were stored."""
    pk = scope_pk(scope)
    stored = 0
    for _ in range(_ROUNDS):
        wanted = _still_wanted(db, table, pk, vectors)
        try:
            for start in range(0, len(wanted), _PER_TRANSACTION):
                chunk = wanted[start : start + _PER_TRANSACTION]
                updates = [_update(table, pk, ref, vector) for ref, vector in chunk]
                entries: list[Entry] = [
                    (ref.record_id, ref.version, "re-embedded") for ref, _ in chunk
                ]
                commit(db, table, pk, _with(updates), entries, at)
                stored += len(chunk)
        except ConflictError:  # a head moved between the read and the write: read again
            continue
        return stored
    raise ConflictError("the records kept changing while their vectors were stored; run again")


def _still_wanted(
    db: DynamoDBClient, table: str, pk: str, vectors: Sequence[tuple[VersionRef, Vector]]
) -> list[tuple[VersionRef, Vector]]:
    firsts: dict[str, tuple[VersionRef, Vector]] = {}
    for ref, vector in vectors:
        firsts.setdefault(ref.record_id, (ref, vector))
    attributes = sorted({extra_attribute(v.embedder) for _, v in firsts.values()})
    names = {"#sk": "sk", "#v": "v", "#st": "st", "#d": "d", "#vs": "vs"}
    names |= {f"#x{i}": name for i, name in enumerate(attributes)}
    heads = db.batch_get(
        table,
        [key(pk, head_sk(rid)) for rid in sorted(firsts)],
        projection=", ".join(names),
        names=names,
    )
    by_sk = {text(item, "sk"): item for item in heads}
    wanted = []
    for rid, (ref, vector) in sorted(firsts.items()):
        head = by_sk.get(head_sk(rid))
        if (
            head is None
            or number(head, "v") != ref.version
            or text(head, "st") != Status.ACTIVE.value
        ):
            continue
        if extra_attribute(vector.embedder) in head:
            continue
        embedding = pydantic_core.from_json(text(head, "d")).get("embedding")
        own = f"{embedding['model_id']}@{embedding['dims']}" if embedding else None
        if own == vector.embedder.key and "vs" in head:
            continue  # the version's own vector is of that embedder already
        wanted.append((ref, vector))
    return wanted


def _with(updates: list[Item]) -> Callable[[Sequence[Item]], list[Item]]:
    """The transaction's items around the feed's (``change_feed.commit``)."""
    return lambda feed: [*updates, *feed]


def _update(table: str, pk: str, ref: VersionRef, vector: Vector) -> Item:
    return {
        "Update": {
            "TableName": table,
            "Key": key(pk, head_sk(ref.record_id)),
            "UpdateExpression": "SET #x = :vec",
            "ConditionExpression": "#v = :v AND #st = :active AND attribute_not_exists(#x)",
            "ExpressionAttributeNames": {
                "#x": extra_attribute(vector.embedder),
                "#v": "v",
                "#st": "st",
            },
            "ExpressionAttributeValues": {
                ":vec": {"B": encode_vector(vector.values)},
                ":v": n(ref.version),
                ":active": s(Status.ACTIVE.value),
            },
        }
    }
