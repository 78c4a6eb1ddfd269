"""The same user paths on DynamoDB, served by moto: requests sent per operation, not times.

moto answers in-process, so its latencies say nothing about DynamoDB's; what carries over is
how many requests each path sends (each a round trip and a bill line). The scope holds the same
synthetic facts and vectors as the embedded store, written 16 per transaction.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from benchmarks.speed_recall import NOW, SCOPE, PrecomputedEmbedder, fill
from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role
from cairn.ports import FloatMatrix, Stores
from cairn.recall import RecallQuery, recall
from cairn.testing.requests import RequestLog

_REGION = "us-east-1"


@dataclass(frozen=True)
class Counted:
    """One operation and the requests it sent, by API name."""

    operation: str
    requests: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.requests.values())


@contextmanager
def moto_backend() -> Iterator[tuple[Stores, RequestLog]]:
    """A DynamoDB backend on moto's in-process DynamoDB, its tables created, and its log."""
    import boto3
    from moto import mock_aws

    from cairn.store.dynamodb import DynamoDBBackend
    from cairn.store.dynamodb.schema import TABLES, create_table_request

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    # moto accepts any credentials; these fake ones keep boto3 from looking for real ones.
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")  # noqa: S106
    try:
        with mock_aws():
            client = boto3.client("dynamodb", region_name=_REGION)
            for table in TABLES:
                client.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
            backend = DynamoDBBackend(
                client,
                items_table="cairn-items",
                events_table="cairn-events",
                clock=FixedClock(NOW),
            )
            yield backend.stores(), RequestLog(client)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def count_paths(
    facts: Sequence[str],
    vectors: FloatMatrix,
    embedder: PrecomputedEmbedder,
    question: str,
    records: int,
) -> list[Counted]:
    """Requests per operation on a scope of ``records`` facts (``records`` <= len(facts))."""
    counted: list[Counted] = []
    with moto_backend() as (stores, log):

        def note(operation: str, action: Callable[[], object]) -> None:
            counted.append(Counted(operation, log.counted(action)))

        note(
            "fill: 16 creates with vectors (one apply)",
            lambda: fill(stores, embedder.identity, facts, vectors, (0, 16)),
        )
        fill(stores, embedder.identity, facts, vectors, (16, records))
        clock = FixedClock(NOW)
        query = RecallQuery(text=question)
        note(
            f"recall at {records:,} records (journal written)",
            lambda: recall(SCOPE, query, stores=stores, embedder=embedder, clock=clock),
        )
        note(
            f"recall at {records:,} records, journal off",
            lambda: recall(
                SCOPE, query, stores=stores, embedder=embedder, clock=clock, journal=False
            ),
        )
        event = EventInput(
            session_id="chat-1",
            event_timestamp=NOW + timedelta(seconds=1),
            payload=(Conversational(role=Role.USER, text=facts[0]),),
        )
        note("append one event", lambda: stores.events.append(SCOPE, event))
        note("list one page of records (1,000)", lambda: stores.records.list_records(SCOPE))
    return counted
