"""Restoring one actor from a point-in-time restore of the stack's tables, on moto.

The tables have PITR on (as the stack deploys them); ``RestoreTableToPointInTime`` makes new
tables as of the backup; the actor is then erased and written to in the live tables, and a
second actor moves on. ``restore_actor`` must bring the first actor back exactly as it was at
the backup, leave the second as it is now, and change nothing when run again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.api.operations.events import session_events
from cairn.changes import Create, NewRecord
from cairn.cli.main import main
from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind
from cairn.ports import RecordPlacement, Stores
from cairn.rollout.index import TriggerPolicy
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.restore import Tables, restore_actor
from cairn.store.dynamodb.schema import TABLES, create_table_request

ALICE = Scope(memory_id="m1", actor_id="tg:1")
BOB = Scope(memory_id="m1", actor_id="tg:2")
LIVE = Tables(items="cairn-items", events="cairn-events")
RESTORED = Tables(items="cairn-items-restored", events="cairn-events-restored")
POLICY = TriggerPolicy(strategy_ids=("facts",), message_count=2)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            name = f"cairn-{table.logical_name}"
            made.create_table(**create_table_request(table, name))
            made.update_continuous_backups(
                TableName=name,
                PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
            )
        yield made


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def stores(client: Any, clock: FixedClock) -> Stores:
    return DynamoDBBackend(
        client, items_table=LIVE.items, events_table=LIVE.events, clock=clock
    ).stores()


def remember(stores: Stores, scope: Scope, content: str) -> str:
    record = NewRecord(
        namespace=f"/facts/{scope.actor_id}/",
        content=content,
        sources=(Source(kind=SourceKind.USER),),
    )
    stores.records.apply(scope, [Create(record=record)])
    assert stores.directory is not None
    stores.directory.place(
        scope.memory_id,
        [
            RecordPlacement(
                record_id=record.record_id, actor_id=scope.actor_id, namespace=record.namespace
            )
        ],
    )
    return record.record_id


def talk(stores: Stores, scope: Scope, clock: FixedClock, *texts: str) -> None:
    assert stores.rollouts is not None
    for n, text in enumerate(texts):
        clock.advance(timedelta(seconds=1))
        event = EventInput(
            session_id="s1",
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=text),),
        )
        stores.rollouts.append_counted(
            scope, event, policy=POLICY, idempotency_key=f"{scope.actor_id}-{n}" * 2
        )


def view(stores: Stores, scope: Scope) -> dict[str, Any]:
    """What a user of the actor's memory sees: records, events, sessions, rollouts, placements."""
    rollouts, directory = stores.rollouts, stores.directory
    assert rollouts is not None
    assert directory is not None
    records = stores.records.list_records(scope, include_inactive=True).items
    return {
        "records": [(r.record_id, r.version, r.content, r.status) for r in records],
        "events": [(e.event_id, e.payload) for e in session_events(stores.events, scope, "s1")],
        "sessions": [s.session_id for s in stores.events.list_sessions(scope).items],
        "actors": stores.events.list_actors(scope.memory_id).items,
        "rollouts": [(r.rollout_id, r.state) for r in rollouts.list_pending(scope)],
        "counters": rollouts.counters(scope, "s1"),
        "placed": [directory.locate(scope.memory_id, r.record_id) for r in records],
    }


@dataclass
class Changed:
    """Alice as of the backup, Bob as he is now, and the record Bob filed after the backup."""

    alice_at_backup: dict[str, Any]
    bob_now: dict[str, Any]
    bob_later: str


def back_up_then_change(client: Any, stores: Stores, clock: FixedClock) -> Changed:
    remember(stores, ALICE, "Lives in Porto")
    talk(stores, ALICE, clock, "Hi.", "I live in Porto.", "I drink green tea.")
    remember(stores, BOB, "Likes jazz")
    at_backup = view(stores, ALICE)
    for live, restored in ((LIVE.items, RESTORED.items), (LIVE.events, RESTORED.events)):
        client.restore_table_to_point_in_time(
            SourceTableName=live, TargetTableName=restored, UseLatestRestorableTime=True
        )
    assert stores.rollouts is not None
    assert stores.directory is not None
    for erase in (stores.records, stores.events, stores.rollouts, stores.directory):
        erase.erase_scope(ALICE)
    talk(stores, ALICE, clock, "Who am I?")  # written after the backup: not part of it
    bob_later = remember(stores, BOB, "Plays the piano")
    return Changed(at_backup, view(stores, BOB), bob_later)


def test_one_actor_is_restored_as_of_the_backup_and_no_one_else_moves(
    client: Any, stores: Stores, clock: FixedClock
) -> None:
    changed = back_up_then_change(client, stores, clock)

    report = restore_actor(DynamoDBClient(client), ALICE, source=RESTORED, target=LIVE)
    again = restore_actor(DynamoDBClient(client), ALICE, source=RESTORED, target=LIVE)

    assert report.written > 0
    assert report.deleted > 0  # what Alice wrote after the backup
    assert view(stores, ALICE) == changed.alice_at_backup
    assert view(stores, BOB) == changed.bob_now
    assert stores.records.get(BOB, changed.bob_later).content == "Plays the piano"
    assert (again.written, again.deleted) == (0, 0)


def test_a_restore_never_rewinds_the_erasure_count_and_brings_back_the_actor_marker(
    client: Any, stores: Stores, clock: FixedClock
) -> None:
    back_up_then_change(client, stores, clock)
    before = stores.records.erasures(ALICE)  # the erase after the backup moved it
    assert ALICE.actor_id not in stores.records.actors(ALICE.memory_id)

    restore_actor(DynamoDBClient(client), ALICE, source=RESTORED, target=LIVE)

    # A plan read before the restore (against the live count) must not land after it, and the
    # count must not go back to a value a plan read before the erase could still hold.
    assert stores.records.erasures(ALICE) > before
    assert ALICE.actor_id in stores.records.actors(ALICE.memory_id)  # DeleteMemory finds her


def cli(*extra: str) -> list[str]:
    return [
        "restore-actor",
        "--memory",
        ALICE.memory_id,
        "--actor",
        ALICE.actor_id,
        "--restored-items",
        RESTORED.items,
        "--restored-events",
        RESTORED.events,
        *extra,
    ]


def test_cairn_restore_actor_reads_the_live_tables_from_the_stack(
    client: Any,
    stores: Stores,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    template = {
        "Resources": {"Unused": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {
            "ItemsTableName": {"Value": LIVE.items},
            "EventsTableName": {"Value": LIVE.events},
        },
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="cairn", TemplateBody=json.dumps(template)
    )
    changed = back_up_then_change(client, stores, clock)

    before = view(stores, ALICE)
    refused = main(cli("--stack", "cairn"))
    unchanged = view(stores, ALICE)
    status = main(cli("--stack", "cairn", "--yes"))

    out = capsys.readouterr()
    assert refused == 2
    assert "add --yes to confirm" in out.err
    assert unchanged == before  # the refusal changed nothing
    assert status == 0
    assert "restored  tg:1 in m1:" in out.out
    assert view(stores, ALICE) == changed.alice_at_backup
    assert view(stores, BOB) == changed.bob_now
