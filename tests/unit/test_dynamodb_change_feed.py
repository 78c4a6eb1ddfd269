"""The DynamoDB change feed's one race, played for real on moto: two writers of one scope read
the same change sequence. A botocore hook commits a second writer after the first has read
the scope's sequence (with its heads), just before its TransactWriteItems is sent: the first
writer's sequence condition fails, it reads the sequence again and commits after the second,
so the scope's feed stays gapless and in commit order."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.changes import Create
from cairn.errors import StoreUnavailableError
from cairn.ports import Stores
from tests.unit.test_dynamodb_races import SCOPE, before_next_transaction, client, fact, stores

__all__ = ["client", "stores"]  # the fixtures, shared with the races of writes.py


def test_a_writer_that_lost_the_sequence_to_another_commits_after_it(
    client: Any, stores: Stores
) -> None:
    assert stores.changes is not None
    first = stores.records.apply(SCOPE, [Create(record=fact("Likes tea"))])[0]
    meanwhile: list[str] = []
    before_next_transaction(
        client,
        lambda: meanwhile.extend(
            v.record_id for v in stores.records.apply(SCOPE, [Create(record=fact("Has a cat"))])
        ),
    )

    (late,) = stores.records.apply(SCOPE, [Create(record=fact("Lives in Porto"))])

    changes = stores.changes.scope_changes(SCOPE)
    assert [(c.sequence, c.record_id) for c in changes] == [
        (1, first.record_id),
        (2, meanwhile[0]),
        (3, late.record_id),
    ]


def test_a_scope_that_keeps_moving_is_a_retryable_error_and_writes_nothing(
    client: Any, stores: Stores
) -> None:
    assert stores.changes is not None
    stores.records.apply(SCOPE, [Create(record=fact("Likes tea"))])

    def another_writer(**_: Any) -> None:
        client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", another_writer)
        stores.records.apply(SCOPE, [Create(record=fact("Has a cat"))])
        client.meta.events.register("before-call.dynamodb.TransactWriteItems", another_writer)

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", another_writer)
    with pytest.raises(StoreUnavailableError):
        stores.records.apply(SCOPE, [Create(record=fact("Lives in Porto"))])
    client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", another_writer)

    contents = [v.content for v in stores.records.list_records(SCOPE).items]
    assert "Lives in Porto" not in contents
    sequences = [c.sequence for c in stores.changes.scope_changes(SCOPE)]
    assert sequences == list(range(1, len(sequences) + 1))  # gapless: every writer that won
