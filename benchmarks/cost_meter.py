"""Counting what each operation costs on the wire: requests by service and operation, DynamoDB
units from the items really read and written, and billable message chunks.

``Meter`` registers on botocore's own event hooks of a boto3 session (every client made from
it afterwards inherits them), so the library's injected clients are counted as they are,
without a wrapper or a mock. For DynamoDB it also reads the items each request touched, before
and after, through a second client of its own (uncounted, on the same moto state): that is how
the units of ``benchmarks.cost_units`` are computed from real item sizes.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.cost_units import IndexShape, Item, item_size, read_units, write_units

CHUNK_BYTES = 64 * 1024  # SNS and SQS bill each 64 KB of a payload as one request
_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
_TOKEN = re.compile(r"[#:][A-Za-z0-9_]+")


@dataclass
class Tally:
    """What one measured operation sent, and what DynamoDB billed for it (computed)."""

    requests: Counter[str] = field(default_factory=Counter)
    read_units: float = 0.0
    write_units: int = 0  # table writes, transactions doubled
    index_write_units: int = 0
    sns_chunks: int = 0
    sns_bytes: int = 0
    sqs_chunks: int = 0
    s3_put_bytes: int = 0

    def add(self, other: Tally) -> None:
        self.requests.update(other.requests)
        self.read_units += other.read_units
        self.write_units += other.write_units
        self.index_write_units += other.index_write_units
        self.sns_chunks += other.sns_chunks
        self.sns_bytes += other.sns_bytes
        self.sqs_chunks += other.sqs_chunks
        self.s3_put_bytes += other.s3_put_bytes


@dataclass(frozen=True)
class TableShape:
    name: str
    keys: tuple[str, ...]
    indexes: tuple[IndexShape, ...]

    def key_of(self, item: Item) -> dict[str, Any]:
        return {k: item[k] for k in self.keys}


def _chunks(size: int) -> int:
    return max(1, math.ceil(size / CHUNK_BYTES))


def _key_only(expression: str, params: dict[str, Any]) -> dict[str, Any]:
    """A Query's parameters with only what its key condition uses (no filter, no projection)."""
    used = set(_TOKEN.findall(expression))
    kept = {
        k: v
        for k, v in params.items()
        if k in ("TableName", "IndexName", "Limit", "ExclusiveStartKey", "ScanIndexForward")
    }
    kept["KeyConditionExpression"] = expression
    names = {k: v for k, v in params.get("ExpressionAttributeNames", {}).items() if k in used}
    values = {k: v for k, v in params.get("ExpressionAttributeValues", {}).items() if k in used}
    if names:
        kept["ExpressionAttributeNames"] = names
    if values:
        kept["ExpressionAttributeValues"] = values
    return kept


class Meter:
    """Counts every request of ``session``'s clients into the tally being measured."""

    def __init__(self, session: Any, peek: Any) -> None:
        self._peek = peek  # a DynamoDB client of another session: its reads are not counted
        self._shapes: dict[str, TableShape] = {}
        self.tally = Tally()
        self.counting_units = True
        # Time spent in these hooks reading items back, and inside requests (moto's emulation
        # here, the network on AWS): both are taken out of the functions' measured durations.
        self.hook_seconds = 0.0
        self.request_seconds = 0.0
        self.request_count = 0
        self._started = 0.0
        session.events.register("before-parameter-build", self._before)
        session.events.register("before-call", self._sending)
        session.events.register("after-call", self._after)
        session.events.register("after-call-error", self._failed)

    @contextmanager
    def measuring(self) -> Iterator[Tally]:
        """Count into a fresh tally while the block runs."""
        outer, self.tally = self.tally, Tally()
        try:
            yield self.tally
        finally:
            outer.add(self.tally)
            self.tally = outer

    @contextmanager
    def unmetered(self) -> Iterator[None]:
        """Count requests, but skip the item reads units need (set-up work nobody is billed for
        here: seeding a scope)."""
        self.counting_units = False
        try:
            yield
        finally:
            self.counting_units = True

    # --- hooks ---------------------------------------------------------------------------

    def _before(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        started = time.perf_counter()
        context["cost.params"] = dict(params)
        writes = model.service_model.service_name == "dynamodb" and model.name in _WRITES
        if writes and self.counting_units:
            context["cost.before"] = self._images(self._written_keys(model.name, params))
        self.hook_seconds += time.perf_counter() - started

    def _sending(self, **_: Any) -> None:
        self._started = time.perf_counter()

    def _answered(self) -> float:
        now = time.perf_counter()
        self.request_seconds += now - self._started
        self.request_count += 1
        return now

    def _after(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        started = self._answered()
        self._count(model.service_model.service_name, model.name, parsed, context)
        self.hook_seconds += time.perf_counter() - started

    def _count(
        self, service: str, name: str, parsed: dict[str, Any], context: dict[str, Any]
    ) -> None:
        self.tally.requests[f"{service}.{name}"] += 1
        params: dict[str, Any] = context.get("cost.params", {})
        if service == "dynamodb" and self.counting_units:
            self._dynamodb_units(name, params, parsed, context)
        elif service == "sns" and name == "Publish":
            size = len(params.get("Message", "").encode("utf-8"))
            self.tally.sns_chunks += _chunks(size)
            self.tally.sns_bytes += size
            self.tally.sqs_chunks += _chunks(size)  # the delivery into the subscribed queue
        elif service == "sqs":
            self.tally.sqs_chunks += self._sqs_chunks(name, params, parsed)
        elif service == "s3" and name == "PutObject":
            body = params.get("Body", b"")
            self.tally.s3_put_bytes += len(body) if isinstance(body, bytes | str) else 0

    def _failed(self, model: Any, **_: Any) -> None:
        # A failed request is still a request; its units (a cancelled transaction, a failed
        # condition) are not computed: none of the measured operations fails.
        self._answered()
        self.tally.requests[f"{model.service_model.service_name}.{model.name}"] += 1

    @staticmethod
    def _sqs_chunks(name: str, params: dict[str, Any], parsed: dict[str, Any]) -> int:
        if name == "ReceiveMessage":
            size = sum(len(m.get("Body", "").encode("utf-8")) for m in parsed.get("Messages", []))
            return _chunks(size)
        if name in ("SendMessage",):
            return _chunks(len(params.get("MessageBody", "").encode("utf-8")))
        return 1

    # --- DynamoDB units --------------------------------------------------------------------

    def shape(self, table: str) -> TableShape:
        if table not in self._shapes:
            found = self._peek.describe_table(TableName=table)["Table"]
            keys = tuple(k["AttributeName"] for k in found["KeySchema"])
            indexes = tuple(
                IndexShape(
                    name=index["IndexName"],
                    keys=tuple(k["AttributeName"] for k in index["KeySchema"]),
                    table_keys=keys,
                    projection=index["Projection"]["ProjectionType"],
                    projected=tuple(index["Projection"].get("NonKeyAttributes", ())),
                )
                for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                for index in found.get(kind, [])
            )
            self._shapes[table] = TableShape(table, keys, indexes)
        return self._shapes[table]

    def _written_keys(self, name: str, params: dict[str, Any]) -> list[tuple[str, str, Item]]:
        """(table, kind, key) of every item the write names, in order."""
        if name == "TransactWriteItems":
            found = []
            for entry in params["TransactItems"]:
                ((kind, body),) = entry.items()
                found.append((body["TableName"], kind, self._key(body["TableName"], body)))
            return found
        if name == "BatchWriteItem":
            return [
                (table, kind, self._key(table, body))
                for table, requests in params["RequestItems"].items()
                for request in requests
                for kind, body in request.items()
            ]
        return [(params["TableName"], name, self._key(params["TableName"], params))]

    def _key(self, table: str, body: dict[str, Any]) -> Item:
        return self.shape(table).key_of(body["Item"]) if "Item" in body else body["Key"]

    def _images(self, keys: list[tuple[str, str, Item]]) -> list[Item | None]:
        """The items at ``keys`` now, strongly consistent, in order (``None`` where absent)."""
        return self._get_many([(table, key) for table, _, key in keys])

    def _get_many(self, keys: list[tuple[str, Item]]) -> list[Item | None]:
        """Items by (table, key), read 100 a request; ``None`` for a missing one."""
        found: dict[tuple[str, str], Item] = {}
        unique = {(t, json.dumps(k, sort_keys=True, default=str)): (t, k) for t, k in keys}
        pending = list(unique.values())
        while pending:
            chunk, pending = pending[:100], pending[100:]
            request: dict[str, Any] = {}
            for table, key in chunk:
                request.setdefault(table, {"Keys": [], "ConsistentRead": True})
                request[table]["Keys"].append(dict(key))
            answer = self._peek.batch_get_item(RequestItems=request)
            for table, items in answer.get("Responses", {}).items():
                for item in items:
                    key_of = self.shape(table).key_of(item)
                    found[(table, json.dumps(key_of, sort_keys=True, default=str))] = item
            for table, rest in answer.get("UnprocessedKeys", {}).items():
                pending += [(table, key) for key in rest["Keys"]]
        return [found.get((t, json.dumps(k, sort_keys=True, default=str))) for t, k in keys]

    def _get(self, table: str, key: Item) -> Item | None:
        (found,) = self._get_many([(table, key)])
        return found

    def _dynamodb_units(
        self, name: str, params: dict[str, Any], parsed: dict[str, Any], context: dict[str, Any]
    ) -> None:
        if name in _WRITES:
            keys = self._written_keys(name, params)
            before, after = context.get("cost.before", [None] * len(keys)), self._images(keys)
            transactional = name == "TransactWriteItems"
            for (table, kind, _), old, new in zip(keys, before, after, strict=True):
                indexes = self.shape(table).indexes
                if kind == "ConditionCheck":
                    table_units, index_units = write_units((), old, old, transactional=True)
                else:
                    table_units, index_units = write_units(
                        indexes, old, new, transactional=transactional
                    )
                self.tally.write_units += table_units
                self.tally.index_write_units += index_units
        elif name == "GetItem":
            found = parsed.get("Item")
            if "ProjectionExpression" in params:
                found = self._get(params["TableName"], params["Key"])
            consistent = bool(params.get("ConsistentRead"))
            self.tally.read_units += read_units(item_size(found), consistent=consistent)
        elif name == "BatchGetItem":
            for table, request in params["RequestItems"].items():
                consistent = bool(request.get("ConsistentRead"))
                sizes = [item_size(item) for item in self._batch_read(table, request, parsed)]
                for size in sizes:
                    self.tally.read_units += read_units(size, consistent=consistent)
        elif name == "Query":
            self.tally.read_units += self._query_units(params, parsed)

    def _batch_read(
        self, table: str, request: dict[str, Any], parsed: dict[str, Any]
    ) -> list[Item | None]:
        """The whole items a BatchGetItem read (its answer, unless it projected), one per key:
        a key found nowhere still costs the minimum read."""
        if "ProjectionExpression" in request:
            return self._get_many([(table, key) for key in request["Keys"]])
        found: list[Item | None] = list(parsed.get("Responses", {}).get(table, []))
        return found + [None] * (len(request["Keys"]) - len(found))

    def _query_units(self, params: dict[str, Any], parsed: dict[str, Any]) -> float:
        """Every item the Query evaluated, filtered out or not: its answer when it neither
        filtered nor projected, else the same key condition, limit and start key again without
        them (an index answers with its entries)."""
        evaluated = parsed.get("Items", [])
        if {"FilterExpression", "ProjectionExpression", "Select"} & set(params):
            again = self._peek.query(**_key_only(params["KeyConditionExpression"], params))
            evaluated = again.get("Items", [])
        total = sum(item_size(item) for item in evaluated)
        # A GSI is always read eventually consistent; a table or LSI as the request asks.
        return read_units(total, consistent=bool(params.get("ConsistentRead")))
