"""``list_records`` on DynamoDB: three key ranges, one per question, all in record-id order.

- live heads: the sparse ``live`` index (only active heads are in it), ``lsk > :after``;
- every head (``include_inactive``): the scope's ``H#`` range, erased ones filtered out;
- as of a time: the scope's ``V#`` range, which sorts by (record id, version), so the current
  version of each record is the last one created at or before the time.

A namespace prefix is a filter (``namespace_matches`` as a condition expression), applied
before results come back but after DynamoDB has read, and billed, the items it looked at.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import islice
from typing import Any

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import CorruptRecordError, InvalidCursorError
from cairn.models import Page, RecordVersion, Scope, Status
from cairn.paging import check_limit
from cairn.row_integrity import report_skipped
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    HEADS_FROM,
    HEADS_UNTIL,
    VERSIONS_FROM,
    VERSIONS_UNTIL,
    Item,
    decode_version,
    encode_time,
    heads_after,
    record_id_of,
    s,
    scope_pk,
    text,
    versions_after,
)
from cairn.store.dynamodb.schema import LIVE_INDEX

# As-of pages read versions, not records: assume a few versions a record so one request
# usually fills the page; a record with more only costs another request.
_VERSIONS_A_RECORD = 4


class RecordListing:
    """Pages of a scope's records as ``RecordStore.list_records`` defines them."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def page(
        self,
        scope: Scope,
        *,
        namespace_prefix: str | None,
        as_of: datetime | None,
        include_inactive: bool,
        limit: int,
        cursor: str | None,
    ) -> Page[RecordVersion]:
        """One page by record id, with a cursor bound to the scope and these arguments."""
        check_limit(limit)
        query = {"ns": namespace_prefix, "as_of": as_of, "inactive": include_inactive}
        after = _position(str(scope), query, cursor)
        pk = scope_pk(scope)
        if as_of is not None:
            found = self._as_of(pk, after, as_of, namespace_prefix, include_inactive, limit)
        elif include_inactive:
            found = self._heads(pk, after, namespace_prefix, limit)
        else:
            found = self._live(pk, after, namespace_prefix, limit)
        versions = list(islice(found, limit + 1))  # one more than asked: is there a next page?
        items = tuple(versions[:limit])
        more = len(versions) > limit
        next_cursor = encode_cursor(str(scope), query, items[-1].record_id) if more else None
        return Page[RecordVersion](items=items, next_cursor=next_cursor)

    def _live(
        self, pk: str, after: str | None, prefix: str | None, limit: int
    ) -> Iterator[RecordVersion]:
        params = _Params(self._table, "lpk = :pk", {":pk": s(pk)}, limit + 1)
        params.request["IndexName"] = LIVE_INDEX.name
        if after is not None:
            params.key_condition(" AND lsk > :after", {":after": s(after)})
        params.namespace(prefix)
        for item in self._db.query(**params.request):
            yield from _sound(pk, item)

    def _heads(
        self, pk: str, after: str | None, prefix: str | None, limit: int
    ) -> Iterator[RecordVersion]:
        low = heads_after(after) if after is not None else HEADS_FROM
        params = _range(self._table, pk, low, HEADS_UNTIL, limit + 1)
        params.filter("#st <> :erased", {"#st": "st"}, {":erased": s(Status.ERASED.value)})
        params.namespace(prefix)
        for item in self._db.query(**params.request):
            yield from _sound(pk, item)

    def _as_of(
        self,
        pk: str,
        after: str | None,
        as_of: datetime,
        prefix: str | None,
        include_inactive: bool,
        limit: int,
    ) -> Iterator[RecordVersion]:
        low = versions_after(after) if after is not None else VERSIONS_FROM
        params = _range(self._table, pk, low, VERSIONS_UNTIL, (limit + 1) * _VERSIONS_A_RECORD)
        params.filter("#ca <= :at", {"#ca": "ca"}, {":at": s(encode_time(as_of))})
        params.namespace(prefix)
        for item in _last_of_each_record(self._db.query(**params.request)):
            status = text(item, "st")
            if status == Status.ERASED.value:
                continue  # tombstones are for history and audit, never for listings
            if include_inactive or status == Status.ACTIVE.value:
                yield from _sound(pk, item)


def _sound(pk: str, item: Item) -> Iterator[RecordVersion]:
    """The item's version, or nothing (reported) when the row is corrupt: one bad row never
    takes a listing, hence the scope's recall, down."""
    try:
        yield decode_version(item)
    except CorruptRecordError as exc:
        report_skipped(pk, exc)


def _last_of_each_record(items: Iterator[Item]) -> Iterator[Item]:
    """From version items in (record id, version) order, the newest of each record."""
    last: Item | None = None
    for item in items:
        if last is not None and _record(item) != _record(last):
            yield last
        last = item
    if last is not None:
        yield last


def _record(item: Item) -> str | None:
    return record_id_of(text(item, "sk"))


class _Params:
    """A Query request assembled from key condition, filters and a page size."""

    def __init__(self, table: str, condition: str, values: dict[str, Any], limit: int) -> None:
        self.request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "Limit": limit,
        }
        self._filters: list[str] = []

    def key_condition(self, more: str, values: dict[str, Any]) -> None:
        self.request["KeyConditionExpression"] += more
        self.request["ExpressionAttributeValues"].update(values)

    def filter(self, expression: str, names: dict[str, str], values: dict[str, Any]) -> None:
        self._filters.append(expression)
        self.request["FilterExpression"] = " AND ".join(f"({f})" for f in self._filters)
        self.request.setdefault("ExpressionAttributeNames", {}).update(names)
        self.request["ExpressionAttributeValues"].update(values)

    def namespace(self, prefix: str | None) -> None:
        """``namespace_matches(ns, prefix)``: equal to the prefix (with or without its final
        ``/``) or under it on a segment boundary; ``/facts/a1`` never reaches ``/facts/a10/``."""
        if not prefix or prefix == "/":
            return
        anchored = prefix if prefix.endswith("/") else prefix + "/"
        terms = ["#ns = :ns_exact", "begins_with(#ns, :ns_under)"]
        values = {":ns_exact": s(prefix), ":ns_under": s(anchored)}
        stripped = prefix.rstrip("/")
        if stripped and stripped != prefix:
            terms.append("#ns = :ns_stripped")
            values[":ns_stripped"] = s(stripped)
        self.filter(" OR ".join(terms), {"#ns": "ns"}, values)


def _range(table: str, pk: str, low: str, high: str, limit: int) -> _Params:
    condition = "pk = :pk AND sk BETWEEN :low AND :high"
    params = _Params(table, condition, {":pk": s(pk), ":low": s(low), ":high": s(high)}, limit)
    params.request["ConsistentRead"] = True
    return params


def _position(scope_key: str, query: dict[str, Any], cursor: str | None) -> str | None:
    if cursor is None:
        return None
    after = decode_cursor(scope_key, query, cursor)
    if not isinstance(after, str):
        raise InvalidCursorError(
            "pagination cursor is malformed; pass back the next token exactly as returned"
        )
    return after
