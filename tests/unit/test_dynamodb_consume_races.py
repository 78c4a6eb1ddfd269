"""The races consuming rollouts in ``apply`` closes on DynamoDB, played for real on moto (a second
writer runs after the heads and rollouts were read, just before the transaction is sent), and
the transaction budget (100 items) that a batch with rollouts must fit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.changes import Create, Retract, Supersede, SupersedeBy
from cairn.clock import FixedClock
from cairn.errors import ConflictError, InvalidInputError, SnapshotConflictError
from cairn.models import Status
from cairn.ports import Stores
from cairn.rollout.index import RolloutState
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request
from tests.conformance.evidence_samples import staged_evidence
from tests.unit.test_dynamodb_races import SCOPE, before_next_transaction, fact


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
    return DynamoDBBackend(
        client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
    ).stores()


def _rollouts(stores: Stores) -> Any:
    assert stores.rollouts is not None
    return stores.rollouts


def test_two_passes_consuming_one_rollout_commit_once(stores: Stores, client: Any) -> None:
    rollouts = _rollouts(stores)
    (evidence,) = staged_evidence(rollouts, SCOPE, FixedClock())
    winner = fact("The user drinks coffee.")

    def other_pass() -> None:
        stores.records.apply(SCOPE, [Create(record=winner)], consume_rollouts=[evidence.rollout_id])

    before_next_transaction(client, other_pass)
    with pytest.raises(ConflictError) as lost:
        stores.records.apply(
            SCOPE,
            [Create(record=fact("The user drinks coffee, again."))],
            consume_rollouts=[evidence.rollout_id],
        )

    assert not isinstance(lost.value, SnapshotConflictError)
    live = [v.content for v in stores.records.list_records(SCOPE).items]
    assert live == [winner.content]
    assert rollouts.get(SCOPE, evidence.rollout_id).state is RolloutState.CONSUMED


def test_a_successor_retired_before_the_commit_fails_the_supersede(
    stores: Stores, client: Any
) -> None:
    (old,) = stores.records.apply(SCOPE, [Create(record=fact("The user prefers tea."))])
    (new,) = stores.records.apply(SCOPE, [Create(record=fact("The user prefers coffee."))])

    before_next_transaction(
        client, lambda: stores.records.apply(SCOPE, [Retract(record_id=new.record_id)])
    )
    with pytest.raises(SnapshotConflictError):
        stores.records.apply(
            SCOPE, [SupersedeBy(record_id=old.record_id, successor_id=new.record_id)]
        )

    assert stores.records.get(SCOPE, old.record_id).status is Status.ACTIVE


def test_a_batch_over_100_transaction_items_is_refused_before_anything_is_sent(
    stores: Stores,
) -> None:
    rollouts = _rollouts(stores)
    ids = [r.rollout_id for r in staged_evidence(rollouts, SCOPE, FixedClock(), 4)]
    checked = [
        stores.records.apply(SCOPE, [Create(record=fact(f"seen {n}"))])[0] for n in range(32)
    ]
    replaced = [
        stores.records.apply(SCOPE, [Create(record=fact(f"old {n}"))])[0] for n in range(16)
    ]
    # 16 supersedes by new records (64 items), 32 other snapshot checks, 4 rollouts (8): 104.
    changes = [
        Supersede(record_id=r.record_id, replacement=fact(f"new {r.content}")) for r in replaced
    ]

    with pytest.raises(InvalidInputError):
        stores.records.apply(
            SCOPE,
            changes,
            snapshot={v.record_id: v.version for v in checked},
            consume_rollouts=ids,
        )

    assert [r.rollout_id for r in rollouts.list_pending(SCOPE, kind="evidence")] == ids
