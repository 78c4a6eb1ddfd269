"""The benchmarks' bulk seeding writes exactly the table the shipped transactions write.

The same changes (the same record ids, the same clock, the same generation tokens) are applied
to one table through ``DynamoDBBackend`` (one TransactWriteItems per apply) and to another
through ``benchmarks.moto_seed`` (the same apply, its writes sent as BatchWriteItem and
UpdateItem); every item of the two tables is compared, attribute for attribute and byte for
byte, with only the table name apart.
"""

from __future__ import annotations

import itertools
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import boto3
import pytest
from moto import mock_aws

from benchmarks.moto_rollback import sorted_once, touched_item_rollback
from benchmarks.moto_seed import BulkSeedClient, moto_backend, seeding_store, sort_partitions
from cairn.changes import Change, Create, RecordPatch, Retract, Revise, Supersede
from cairn.clock import FixedClock
from cairn.models import Scope
from cairn.store.dynamodb import DynamoDBBackend, change_feed
from cairn.store.dynamodb.codec import scope_pk
from cairn.store.dynamodb.schema import TABLES, create_table_request
from tests.unit.index_objects_world import SCOPE, record

OTHER = Scope(memory_id="m1", actor_id="tg:2")


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        for prefix in ("shipped", "seeded"):
            for table in TABLES:
                name = f"{prefix}-{table.logical_name}"
                client.create_table(**create_table_request(table, name))
        yield client


def batches() -> list[tuple[Scope, list[Change]]]:
    """Creates 16 a batch in two scopes, then a revise, a supersede and a retract."""
    made = [Create(record=record(f"Fact number {i} about topic {i % 7}")) for i in range(40)]
    ids = [change.record.record_id for change in made]
    found: list[tuple[Scope, list[Change]]] = [
        (SCOPE, list(made[start : start + 16])) for start in range(0, 32, 16)
    ]
    found.append((OTHER, list(made[32:])))
    found.append((SCOPE, [Revise(record_id=ids[0], patch=RecordPatch(content="Fact zero, now"))]))
    found.append((SCOPE, [Supersede(record_id=ids[1], replacement=record("Fact one, replaced"))]))
    found.append((SCOPE, [Retract(record_id=ids[2], reason="asked to")]))
    return found


def write(apply: Callable[[Scope, Sequence[Change]], object], monkeypatch: Any) -> None:
    tokens = itertools.count()
    # the generation tokens only (the transactions' request tokens are no item)
    tokened = types.SimpleNamespace(uuid4=lambda: uuid.UUID(int=next(tokens)))
    monkeypatch.setattr(change_feed, "uuid", tokened)
    for scope, changes in batches_made:
        apply(scope, changes)


def table(client: Any, name: str) -> list[dict[str, Any]]:
    items = []
    for page in client.get_paginator("scan").paginate(TableName=name):
        items += page["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


batches_made = batches()


@pytest.mark.parametrize("direct", [False, True], ids=["batch-write", "moto-backend"])
def test_a_bulk_seeded_table_is_byte_for_byte_the_shipped_one(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    clock = FixedClock()
    shipped = DynamoDBBackend(
        dynamodb, items_table="shipped-items", events_table="shipped-events", clock=clock
    ).stores()
    write(shipped.records.apply, monkeypatch)
    backend = moto_backend("us-east-1") if direct else None
    seeded = seeding_store(dynamodb, "seeded-items", clock, backend=backend)
    write(seeded.apply, monkeypatch)

    assert isinstance(seeded._db, BulkSeedClient)
    assert seeded._db.transactions == len(batches_made)
    written = table(dynamodb, "shipped-items")
    assert len(written) > 2 * 40  # versions, heads, generations, change items, actor markers
    assert table(dynamodb, "seeded-items") == written
    assert table(dynamodb, "seeded-events") == table(dynamodb, "shipped-events") == []


def transactions(client: Any, name: str) -> tuple[list[str], list[Any]]:
    """A committed transaction (a Put, an Update), then one cancelled by its last item after a
    Put and an Update of items that exist and a Put of one that does not; the errors, and the
    pages read on the way."""
    key = {"pk": {"S": "P"}}

    def item(sk: str, **more: Any) -> dict[str, Any]:
        return {**key, "sk": {"S": sk}, **more}

    def update(sk: str, value: str) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": name,
                "Key": item(sk),
                "UpdateExpression": "SET v = :v",
                "ExpressionAttributeValues": {":v": {"S": value}},
            }
        }

    client.put_item(TableName=name, Item=item("old", v={"S": "kept"}, b={"B": b"bytes"}))
    seen = [pages(client, name, "P")]
    client.put_item(TableName=name, Item=item("guard"))
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": name, "Item": item("a", v={"S": "first"})}},
            update("old", "changed once"),
        ]
    )
    seen.append(pages(client, name, "P"))  # a Query between (moto's sorted items, cached or not)
    errors = []
    try:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": name, "Item": item("a", v={"S": "second"})}},
                update("old", "changed twice"),
                {"Put": {"TableName": name, "Item": item("new")}},
                {
                    "ConditionCheck": {
                        "TableName": name,
                        "Key": item("guard"),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    except client.exceptions.TransactionCanceledException as exc:
        errors = [r.get("Code", "") for r in exc.response["CancellationReasons"]]
    return errors, seen


def test_the_light_rollback_undoes_a_cancelled_transaction_as_moto_does(dynamodb: Any) -> None:
    errors, seen = transactions(dynamodb, "shipped-items")
    shipped_pages = pages(dynamodb, "shipped-items", "P")
    with touched_item_rollback(), sorted_once():
        light_errors, light_seen = transactions(dynamodb, "seeded-items")
        light_pages = pages(dynamodb, "seeded-items", "P")
        dynamodb.delete_item(TableName="seeded-items", Key={"pk": {"S": "P"}, "sk": {"S": "a"}})
        after_delete = pages(dynamodb, "seeded-items", "P")
    assert light_errors == errors == ["None", "None", "None", "ConditionalCheckFailed"]
    assert light_pages == shipped_pages
    assert light_seen == seen
    assert [i["sk"]["S"] for page in after_delete for i in page] == ["guard", "old"]
    dynamodb.put_item(
        TableName="seeded-items", Item={"pk": {"S": "P"}, "sk": {"S": "a"}, "v": {"S": "first"}}
    )
    assert table(dynamodb, "seeded-items") == table(dynamodb, "shipped-items")
    assert [i["v"]["S"] for i in table(dynamodb, "seeded-items") if "v" in i] == [
        "first",
        "changed once",
    ]


def pages(client: Any, name: str, pk: str = scope_pk(SCOPE)) -> list[list[dict[str, Any]]]:
    """A partition read 7 items a Query page, as a paged read goes."""
    params: dict[str, Any] = {
        "TableName": name,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}},
        "Limit": 7,
        "ConsistentRead": True,
    }
    found = []
    while True:
        page = client.query(**params)
        found.append(page["Items"])
        if "LastEvaluatedKey" not in page:
            return found
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_partitions_in_key_order_answer_every_query_page_alike(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = moto_backend("us-east-1")
    write(seeding_store(dynamodb, "seeded-items", FixedClock(), backend=backend).apply, monkeypatch)
    before = pages(dynamodb, "seeded-items")
    rows = backend.get_table("seeded-items").items
    assert list(rows[next(iter(rows))]) != sorted(rows[next(iter(rows))])  # seeding order

    sort_partitions(backend, "seeded-items")

    assert list(rows[next(iter(rows))]) == sorted(rows[next(iter(rows))])
    assert len(before) > 5
    assert pages(dynamodb, "seeded-items") == before
