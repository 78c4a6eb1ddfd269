"""Writes whose answer is lost after DynamoDB committed them, played for real on moto.

A botocore ``after-call`` hook lets the real request reach moto and commit, then raises what a
client sees when the answer never arrives (a read timeout, a connection closed mid-answer, a
500). Each write must end up in the table exactly once, and the caller must be told it
succeeded, not "nothing was written, retry" (issue 14, item 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from moto import mock_aws

from cairn.changes import Create, FoldIn, NewRecord
from cairn.clock import FixedClock
from cairn.errors import StoreTimeoutError, StoreUnavailableError
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.rollout.index import TriggerPolicy
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
AT = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def server_error() -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "InternalServerError", "Message": "lost"},
            "ResponseMetadata": {"HTTPStatusCode": 500},
        },
        "TransactWriteItems",
    )


FAULTS = {
    "read-timeout": lambda: ReadTimeoutError(endpoint_url="https://dynamodb"),
    "connection-closed": lambda: ConnectionClosedError(endpoint_url="https://dynamodb"),
    "server-error": server_error,
}


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            made.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        yield made


@pytest.fixture
def stores(client: Any) -> Stores:
    backend = DynamoDBBackend(
        client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
    )
    return backend.stores()


def lose_answers(client: Any, fault: str, *, times: int = 1) -> list[int]:
    """The next ``times`` TransactWriteItems commit on moto, then their answers are lost."""
    lost: list[int] = []

    def hook(**_: Any) -> None:
        if len(lost) < times:
            lost.append(1)
            raise FAULTS[fault]()

    client.meta.events.register("after-call.dynamodb.TransactWriteItems", hook)
    return lost


def turn(text: str) -> EventInput:
    payload = Conversational(role=Role.USER, text=text)
    return EventInput(session_id="s1", event_timestamp=AT, payload=(payload,))


def event_items(client: Any) -> list[dict[str, Any]]:
    items = client.scan(TableName="cairn-events")["Items"]
    return [item for item in items if item["pk"]["S"].startswith("E#")]


@pytest.mark.fault("event-append", "answer-lost", "dynamodb")
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_an_append_whose_answer_is_lost_is_stored_once_and_acknowledged(
    client: Any, stores: Stores, fault: str
) -> None:
    lost = lose_answers(client, fault)

    stored = stores.events.append(SCOPE, turn("I live in Porto."))

    assert lost == [1]  # the fault fired: the first answer never arrived
    assert [e.event_id for e in stores.events.list_events(SCOPE, "s1").items] == [stored.event_id]
    assert len(event_items(client)) == 1
    assert [s.session_id for s in stores.events.list_sessions(SCOPE).items] == ["s1"]


@pytest.mark.fault("trigger", "answer-lost", "dynamodb")
def test_a_counted_append_whose_answer_is_lost_is_stored_and_counted_once(
    client: Any, stores: Stores
) -> None:
    policy = TriggerPolicy(strategy_ids=("facts",), message_count=2)
    stores.rollouts.append_counted(SCOPE, turn("Hi."), policy=policy)
    lost = lose_answers(client, "read-timeout")

    appended = stores.rollouts.append_counted(SCOPE, turn("I live in Porto."), policy=policy)

    assert lost == [1]
    assert appended.claim is not None  # the second message fired the trigger, once
    assert len(event_items(client)) == 2
    assert len(stores.rollouts.list_pending(SCOPE)) == 1
    counters = stores.rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.version == 2


@pytest.mark.fault("formation", "answer-lost", "dynamodb")
def test_an_apply_whose_answer_is_lost_writes_one_version_once(client: Any, stores: Stores) -> None:
    record = NewRecord(
        namespace="/facts/tg:1/", content="Likes tea", sources=(Source(kind=SourceKind.USER),)
    )
    lost = lose_answers(client, "read-timeout")

    written = stores.records.apply(SCOPE, [Create(record=record)])
    folded = stores.records.apply(SCOPE, [FoldIn(record_id=record.record_id)])

    assert lost == [1]
    assert [v.version for v in written] == [1]
    assert stores.records.get(SCOPE, record.record_id).seen_count == folded[0].seen_count == 2


def test_a_delete_whose_answer_is_lost_is_acknowledged(client: Any, stores: Stores) -> None:
    stored = stores.events.append(SCOPE, turn("I live in Porto."))
    lose_answers(client, "connection-closed")

    stores.events.delete_event(SCOPE, "s1", stored.event_id)

    assert event_items(client) == []
    assert stores.events.list_sessions(SCOPE).items == ()


@pytest.mark.fault("event-append", "timeout", "dynamodb")
def test_a_write_that_never_commits_is_still_reported_unwritten(
    client: Any, stores: Stores
) -> None:
    def refuse(**_: Any) -> None:
        raise ReadTimeoutError(endpoint_url="https://dynamodb")

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", refuse)

    with pytest.raises(StoreTimeoutError):
        stores.events.append(SCOPE, turn("I live in Porto."))

    assert event_items(client) == []


class Outage:
    """Every GetItem and TransactWriteItems fails to connect while ``down`` (a DynamoDB outage
    that outlasts the store's resends and read-backs)."""

    def __init__(self, client: Any) -> None:
        self.down = False
        self.refused = 0
        for operation in ("GetItem", "TransactWriteItems"):
            client.meta.events.register(f"before-call.dynamodb.{operation}", self._hook)

    def _hook(self, **_: Any) -> None:
        if self.down:
            self.refused += 1
            raise EndpointConnectionError(endpoint_url="https://dynamodb")

    def lose_the_next_answer(self, client: Any) -> None:
        """The next TransactWriteItems commits on moto, its answer is lost, and the outage
        begins."""
        fired: list[int] = []

        def hook(**_: Any) -> None:
            if not fired:
                fired.append(1)
                self.down = True
                raise ReadTimeoutError(endpoint_url="https://dynamodb")

        client.meta.events.register("after-call.dynamodb.TransactWriteItems", hook)


@pytest.mark.fault("event-append", "answer-lost", "dynamodb")
def test_an_append_that_landed_unseen_in_an_outage_is_not_stored_again_by_its_retry(
    client: Any, stores: Stores
) -> None:
    """The append commits, its answer is lost, and every resend and read-back fails: the
    caller hears "unavailable" and appends again once DynamoDB is back (issue 14)."""
    outage = Outage(client)

    outage.lose_the_next_answer(client)
    key = "a1" * 32

    with pytest.raises(StoreUnavailableError):
        stores.events.append(SCOPE, turn("I live in Porto."), idempotency_key=key)
    outage.down = False
    retried = EventInput(
        session_id="s1",
        event_timestamp=AT + timedelta(seconds=30),  # the retry re-stamps the time
        payload=(Conversational(role=Role.USER, text="I live in Porto."),),
    )
    again = stores.events.append(SCOPE, retried, idempotency_key=key)

    assert outage.refused >= 3  # every read-back of the first append failed
    assert len(event_items(client)) == 1
    assert again.event_timestamp == AT  # the first append's event, as it landed
    assert [e.event_id for e in stores.events.list_events(SCOPE, "s1").items] == [again.event_id]


@pytest.mark.fault("trigger", "answer-lost", "dynamodb")
def test_a_counted_append_that_landed_unseen_in_an_outage_is_counted_once(
    client: Any, stores: Stores
) -> None:
    outage = Outage(client)
    policy = TriggerPolicy(strategy_ids=("facts",), message_count=1)

    outage.lose_the_next_answer(client)
    key = "b2" * 32

    with pytest.raises(StoreUnavailableError):
        stores.rollouts.append_counted(SCOPE, turn("Hi."), policy=policy, idempotency_key=key)
    outage.down = False
    again = stores.rollouts.append_counted(SCOPE, turn("Hi."), policy=policy, idempotency_key=key)

    assert again.claim is None  # the first append's claim fired already
    assert len(event_items(client)) == 1
    assert len(stores.rollouts.list_pending(SCOPE)) == 1
    counters = stores.rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.version == 1


def test_a_restore_whose_answer_is_lost_writes_the_history_once(
    client: Any, stores: Stores
) -> None:
    record = NewRecord(
        namespace="/facts/tg:1/", content="Likes tea", sources=(Source(kind=SourceKind.USER),)
    )
    stores.records.apply(SCOPE, [Create(record=record)])
    stores.records.apply(SCOPE, [FoldIn(record_id=record.record_id)])
    history = stores.records.history(SCOPE, record.record_id)
    target = DynamoDBBackend(
        client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
    ).stores()
    elsewhere = Scope(memory_id="m2", actor_id="tg:1")
    moved = tuple(v.model_copy(update={"memory_id": elsewhere.memory_id}) for v in history)
    lost = lose_answers(client, "read-timeout")

    restored = target.records.restore(elsewhere, moved)

    assert lost == [1]  # committed, answer lost, acknowledged: not "held already"
    assert restored == moved
    assert target.records.history(elsewhere, record.record_id) == moved


def test_a_close_claim_whose_answer_is_lost_claims_once(client: Any, stores: Stores) -> None:
    policy = TriggerPolicy(strategy_ids=("facts",), message_count=6)
    stores.rollouts.append_counted(SCOPE, turn("I live in Porto."), policy=policy)
    lost = lose_answers(client, "read-timeout")

    claim = stores.rollouts.claim_session(SCOPE, "s1", AT)

    assert lost == [1]
    assert claim is not None
    assert [r.rollout_id for r in stores.rollouts.list_pending(SCOPE)] == [claim.rollout_id]
    assert stores.rollouts.claim_session(SCOPE, "s1", AT) is None
