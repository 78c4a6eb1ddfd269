"""The AgentCore API's state on DynamoDB (moto): requests per operation, and the races closed.

Request counts are counted on the wire by ``cairn.testing.requests.RequestLog``; the numbers
are the ones docs/dynamodb.md quotes. The races are played for real: a botocore hook runs a
second writer right before the first one's write leaves the client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.clock import FixedClock
from cairn.errors import ConflictError, MemoryNameTakenError, MemoryNotFoundError
from cairn.memories import MemoryConfig, memory_arn
from cairn.models import Scope
from cairn.ports import IdempotencyStore, MemoryConfigStore, RecordDirectory, RecordPlacement
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request
from cairn.testing.requests import RequestLog

T0 = datetime(2026, 1, 1, tzinfo=UTC)
KEY = "k" * 64


@dataclass
class World:
    memories: MemoryConfigStore
    claims: IdempotencyStore
    directory: RecordDirectory
    log: RequestLog
    client: Any


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            client.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        stores = DynamoDBBackend(
            client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
        ).stores()
        assert stores.memories is not None
        assert stores.idempotency is not None
        assert stores.directory is not None
        yield World(
            stores.memories, stores.idempotency, stores.directory, RequestLog(client), client
        )


def memory(name: str, suffix: str = "AbCdEf1234") -> MemoryConfig:
    memory_id = f"{name}-{suffix}"
    return MemoryConfig(
        memory_id=memory_id,
        arn=memory_arn("us-east-1", "000000000000", memory_id),
        name=name,
        event_expiry_days=30,
        created_at=T0,
        updated_at=T0,
    )


def placed(record: int, actor: str, namespace: str) -> RecordPlacement:
    return RecordPlacement(record_id=f"mem-{record:036d}", actor_id=actor, namespace=namespace)


def before_next(client: Any, operation: str, meanwhile: Callable[[], object]) -> None:
    """Run ``meanwhile`` once, right before the next ``operation`` leaves the client."""
    fired: list[bool] = []

    def hook(**_: Any) -> None:
        if not fired:
            fired.append(True)  # first, so the writer inside does not re-enter
            meanwhile()

    client.meta.events.register(f"before-call.dynamodb.{operation}", hook)


def test_memory_configuration_requests(world: World) -> None:
    first = memory("support")
    log, memories = world.log, world.memories

    assert log.during(lambda: memories.create(first)) == ["TransactWriteItems"]
    assert log.during(lambda: memories.get(first.memory_id)) == ["GetItem"]
    assert log.during(
        lambda: memories.replace(first.revised(T0, description="x"), expected_revision=1)
    ) == ["PutItem"]
    assert log.during(lambda: memories.list_memories()) == ["Query"]
    assert log.during(lambda: memories.delete(first.memory_id)) == ["GetItem", "TransactWriteItems"]


def test_a_refused_create_or_replace_costs_one_read_to_say_why(world: World) -> None:
    memories = world.memories
    memories.create(memory("support"))

    def taken() -> None:
        with pytest.raises(MemoryNameTakenError):
            memories.create(memory("support", suffix="ZyXwVu9876"))

    def stale() -> None:
        with pytest.raises(ConflictError, match="revision 1, expected 7"):
            memories.replace(memory("support").revised(T0), expected_revision=7)

    assert world.log.during(taken) == ["TransactWriteItems", "GetItem"]
    assert world.log.during(stale) == ["PutItem", "GetItem"]


def test_two_creates_racing_for_one_name_leave_exactly_one_memory(world: World) -> None:
    memories = world.memories
    before_next(
        world.client, "TransactWriteItems", lambda: memories.create(memory("support", "Winner1234"))
    )

    with pytest.raises(MemoryNameTakenError):
        memories.create(memory("support", suffix="Loser12345"))

    assert [m.memory_id for m in memories.list_memories().items] == ["support-Winner1234"]


def test_an_update_racing_a_delete_is_not_found_and_writes_nothing(world: World) -> None:
    memories = world.memories
    original = memory("support")
    memories.create(original)
    before_next(world.client, "PutItem", lambda: memories.delete(original.memory_id))

    with pytest.raises(MemoryNotFoundError):
        memories.replace(original.revised(T0, description="late"), expected_revision=1)

    assert memories.list_memories().items == ()
    memories.create(memory("support", suffix="ZyXwVu9876"))  # the name was freed with it


def test_client_token_requests(world: World) -> None:
    claims, later = world.claims, T0 + timedelta(minutes=1)

    assert world.log.during(lambda: claims.claim(KEY, "fp", now=T0, expires_at=later)) == [
        "PutItem"
    ]
    assert world.log.during(lambda: claims.claim(KEY, "fp", now=T0, expires_at=later)) == [
        "PutItem",
        "GetItem",
    ]
    assert world.log.during(lambda: claims.complete(KEY, {"a": 1}, expires_at=later)) == [
        "UpdateItem"
    ]
    assert world.log.during(lambda: claims.release(KEY)) == ["DeleteItem"]


def test_a_claim_stamps_the_ttl_attribute_after_its_expiry(world: World) -> None:
    expires = T0 + timedelta(hours=24, microseconds=1)
    world.claims.claim(KEY, "fp", now=T0, expires_at=expires)

    (item,) = world.client.scan(TableName="cairn-items")["Items"]

    assert int(item["expires_at"]["N"]) == int(expires.timestamp()) + 1
    assert "k" * 64 in item["pk"]["S"]
    assert set(item) == {"pk", "sk", "fp", "ex", "expires_at"}  # digests only, no content


def test_of_two_requests_with_one_token_the_loser_sees_the_winners_claim(world: World) -> None:
    claims, later = world.claims, T0 + timedelta(minutes=1)
    before_next(
        world.client, "PutItem", lambda: claims.claim(KEY, "winner", now=T0, expires_at=later)
    )

    seen = claims.claim(KEY, "loser", now=T0, expires_at=later)

    assert seen is not None
    assert seen.fingerprint == "winner"


def test_record_directory_requests(world: World) -> None:
    directory, log = world.directory, world.log
    three = [placed(i, "a1", "/facts/a1/") for i in range(3)]

    assert log.during(lambda: directory.place("m1", three)) == [
        "BatchGetItem",
        "TransactWriteItems",
    ]
    assert log.transaction_sizes[-1] == 7  # three R# and three A# puts, one count
    assert log.during(lambda: directory.place("m1", three)) == ["BatchGetItem"]  # unchanged
    assert log.during(lambda: directory.locate("m1", three[0].record_id)) == ["GetItem"]
    assert log.during(lambda: directory.actors("m1", namespace_prefix="/facts/")) == ["Query"]
    assert log.during(lambda: directory.erase_scope(Scope(memory_id="m1", actor_id="a1"))) == [
        "Query",
        "TransactWriteItems",
        "DeleteItem",  # the emptied count, one per namespace of the actor
    ]


def test_placing_many_records_writes_twenty_a_transaction(world: World) -> None:
    many = [placed(i, f"a{i % 2}", f"/facts/a{i % 2}/") for i in range(45)]

    sent = world.log.during(lambda: world.directory.place("m1", many))

    assert sent == ["BatchGetItem", "TransactWriteItems"] * 3
    assert world.directory.actors("m1") == ("a0", "a1")


def test_a_record_moved_by_another_writer_meanwhile_keeps_the_counts_exact(world: World) -> None:
    directory = world.directory
    directory.place("m1", [placed(1, "a1", "/facts/a1/")])
    before_next(
        world.client,
        "TransactWriteItems",
        lambda: directory.place("m1", [placed(1, "a2", "/facts/a2/")]),
    )

    directory.place("m1", [placed(1, "a3", "/facts/a3/")])

    assert directory.locate("m1", placed(1, "a3", "/").record_id).actor_id == "a3"
    assert directory.actors("m1") == ("a3",)
    assert directory.erase_scope(Scope(memory_id="m1", actor_id="a2")) == 0
    assert directory.erase_scope(Scope(memory_id="m1", actor_id="a3")) == 1
    assert directory.actors("m1") == ()
    leftovers = world.client.scan(TableName="cairn-items")["Items"]
    assert [i["sk"]["S"] for i in leftovers if int(i.get("n", {"N": "0"})["N"]) != 0] == []


def test_an_erase_racing_a_move_forgets_only_what_stayed_with_the_actor(world: World) -> None:
    directory = world.directory
    directory.place("m1", [placed(i, "a1", "/facts/a1/") for i in range(40)])
    before_next(
        world.client,
        "TransactWriteItems",
        lambda: directory.place("m1", [placed(0, "a2", "/facts/a2/")]),
    )

    forgotten = directory.erase_scope(Scope(memory_id="m1", actor_id="a1"))

    assert forgotten == 39
    assert directory.actors("m1") == ("a2",)
    assert directory.locate("m1", placed(0, "a2", "/").record_id).actor_id == "a2"
    items = world.client.scan(TableName="cairn-items")["Items"]
    assert sorted(i["sk"]["S"][:2] for i in items) == ["A#", "N#", "R#"]  # the moved record's
