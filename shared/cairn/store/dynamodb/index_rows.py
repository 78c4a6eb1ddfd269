"""A scope's live heads for the recall index, read strongly consistent and without re-validation.

The rows are the store's own: each head's JSON was a validated ``RecordVersion`` when ``apply``
wrote it, so it is read here as plain JSON (``pydantic_core.from_json``, the fields the index
needs) and parsed into a model only when a recall shows it (as ``cairn.store.sqlite.index_rows``
does for SQLite; the field rules are the same).

Heads come from the table's ``H#`` range with ``ConsistentRead`` (the ``live`` index is
eventually consistent: an index object built from it could hold a write's absence under that
write's generation, and be served until the next write). Vectors come from the version items
that hold their bytes (the head's ``vs``), 100 a BatchGetItem, as ``vectors`` reads them, or,
for a vector re-embedded by another embedder, from the head item itself
(``cairn.store.dynamodb.reembedding``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pydantic_core

from cairn.models import EmbedderId, RecordVersion, Scope, Status
from cairn.ports import IndexRow, stored_threads
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    HEADS_FROM,
    HEADS_UNTIL,
    Item,
    decode_vector,
    head_sk,
    key,
    number,
    record_id_of,
    s,
    scope_pk,
    text,
    version_sk,
)
from cairn.store.dynamodb.reembedding import extra_attribute, extra_vector


def read_index_rows(
    db: DynamoDBClient, table: str, scope: Scope, embedder: EmbedderId | None
) -> list[IndexRow]:
    """Every active head of ``scope`` in record-id order, each with its vector made by
    ``embedder`` (if any). Requests: one Query per MB of heads, one BatchGetItem per 100
    vectors."""
    pk = scope_pk(scope)
    names = {"#st": "st", "#sk": "sk", "#d": "d", "#vs": "vs"}
    if embedder is not None:  # a vector of it re-embedded onto the head item
        names["#x"] = extra_attribute(embedder)
    heads: list[Item] = list(
        db.query(
            TableName=table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            FilterExpression="#st = :active",
            ProjectionExpression=", ".join(name for name in names if name != "#st"),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={
                ":pk": s(pk),
                ":low": s(HEADS_FROM),
                ":high": s(HEADS_UNTIL),
                ":active": s(Status.ACTIVE.value),
            },
            ConsistentRead=True,
        )
    )
    return _rows_of(db, table, pk, heads, embedder)


def read_head_rows(
    db: DynamoDBClient,
    table: str,
    scope: Scope,
    embedder: EmbedderId | None,
    record_ids: Sequence[str],
) -> dict[str, IndexRow]:
    """The rows of those ``record_ids`` whose head is active, by record id, strongly
    consistent: one BatchGetItem per 100 heads, one per 100 of their vectors."""
    pk = scope_pk(scope)
    wanted = sorted(set(record_ids))
    names = {"#sk": "sk", "#d": "d", "#vs": "vs", "#st": "st"}
    if embedder is not None:  # a vector of it re-embedded onto the head item
        names["#x"] = extra_attribute(embedder)
    heads = db.batch_get(
        table, [key(pk, head_sk(rid)) for rid in wanted], projection=", ".join(names), names=names
    )
    active = [item for item in heads if item.get("st") == s(Status.ACTIVE.value)]
    active.sort(key=lambda item: text(item, "sk"))
    return {row.record_id: row for row in _rows_of(db, table, pk, active, embedder)}


def _rows_of(
    db: DynamoDBClient, table: str, pk: str, heads: list[Item], embedder: EmbedderId | None
) -> list[IndexRow]:
    parsed = [pydantic_core.from_json(text(item, "d")) for item in heads]
    sources: dict[int, str] = {}
    if embedder is not None:
        for i, (item, fields) in enumerate(zip(heads, parsed, strict=True)):
            if "vs" in item and _embedding_key(fields.get("embedding")) == embedder.key:
                rid = str(record_id_of(text(item, "sk")))
                sources[i] = version_sk(rid, number(item, "vs"))
    blobs = _vector_blobs(db, table, pk, sorted(set(sources.values())))
    rows = []
    for i, (item, fields) in enumerate(zip(heads, parsed, strict=True)):
        blob = blobs.get(sources[i]) if i in sources else None
        vector = decode_vector(blob, embedder.dims) if blob is not None and embedder else None
        if vector is None and embedder is not None:
            vector = extra_vector(item, embedder)
        rows.append(_row(text(item, "d"), fields, vector))
    return rows


def _embedding_key(embedding: dict[str, Any] | None) -> str | None:
    return f"{embedding['model_id']}@{embedding['dims']}" if embedding else None


def _vector_blobs(
    db: DynamoDBClient, table: str, pk: str, sort_keys: list[str]
) -> dict[str, bytes]:
    if not sort_keys:
        return {}
    found = db.batch_get(
        table,
        [key(pk, sk) for sk in sort_keys],
        projection="#sk, #vec",
        names={"#sk": "sk", "#vec": "vec"},
    )
    return {text(item, "sk"): bytes(item["vec"]["B"]) for item in found if "vec" in item}


def _row(data: str, fields: dict[str, Any], vector: Any) -> IndexRow:
    content = fields["content"]
    searchable = " ".join((content, *fields["keywords"], *fields["entities"], *fields["tags"]))
    return IndexRow(
        record_id=fields["record_id"],
        namespace=fields["namespace"],
        strategy=fields["strategy"],
        searchable=searchable,
        content=content,
        confidence=float(fields["confidence"]),
        first_seen_at=datetime.fromisoformat(fields["first_seen_at"]),
        last_seen_at=datetime.fromisoformat(fields["last_seen_at"]),
        threads=stored_threads(fields["sources"], fields["edges"]),
        trusted=fields["trust"] == "trusted",
        load=lambda: RecordVersion.model_validate_json(data),
        vector=vector,
        data=data,
    )
