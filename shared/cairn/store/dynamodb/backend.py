"""The AWS backend: records, events and the recall journal in two DynamoDB tables.

``DynamoDBBackend(boto3.client("dynamodb"), items_table=..., events_table=...).stores()``
gives a ``RecordStore``, an ``EventStore`` and a ``JournalStore`` that behave exactly like the
in-memory reference (``tests/conformance`` runs against this one on moto), plus the rollout index
and what the AgentCore API keeps beside them: memory configurations, client-token claims and
the record directory (``_dynamodb_api_state``, ``_dynamodb_directory``).

- The client is injected (a low-level boto3 DynamoDB client) and owned by the caller; nothing
  here creates clients, reads the environment or touches AWS at import. Configure retries and
  timeouts on the client (``botocore.config.Config``); what still fails is translated once, by
  error code, into ``cairn.errors`` (``cairn.store.dynamodb.client.translate``).
- The tables are the ones ``cairn.store.dynamodb.schema`` describes; item shapes, access
  patterns and what each operation costs are in ``docs/dynamodb.md``.
- ``apply`` is one TransactWriteItems checked by condition expressions: a head that moved
  between read and commit fails it, and nothing is written (``SnapshotConflictError``).
- Reads are strongly consistent, except listing live heads: that reads the ``live`` index,
  which trails the table by the index's propagation delay (usually well under a second).
- Recall keeps an index of each scope in process, checked per recall against the scope's
  generation item (``generations``: one strongly consistent GetItem); with ``index_objects``
  (``cairn.aws.s3_index_objects``) a cold process fetches the scope's index object instead of
  reading every head, and erase deletes those objects too.
- Erase tombstones versions in place (DynamoDB keeps no old copies of an overwritten item;
  point-in-time-recovery backups do, for their retention period, see docs/dynamodb.md).
"""

from __future__ import annotations

from typing import Any

from cairn.clock import SystemClock
from cairn.ports import Clock, IndexObjectStore, Stores
from cairn.store.dynamodb.api_state import DynamoDBIdempotencyStore, DynamoDBMemoryConfigStore
from cairn.store.dynamodb.change_feed import DynamoDBChangeFeed
from cairn.store.dynamodb.chunks import DynamoDBChunkStore
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.directory import DynamoDBRecordDirectory
from cairn.store.dynamodb.events import DynamoDBEventStore
from cairn.store.dynamodb.generations import DynamoDBHistoryGenerations, DynamoDBRecordGenerations
from cairn.store.dynamodb.jobs import DynamoDBJobLog
from cairn.store.dynamodb.journal import DynamoDBJournalStore
from cairn.store.dynamodb.links import DynamoDBAccessCounts, DynamoDBLinkStore
from cairn.store.dynamodb.quarantine import DynamoDBQuarantineList
from cairn.store.dynamodb.records import DynamoDBRecordStore
from cairn.store.dynamodb.rollouts import DynamoDBRolloutStore

__all__ = [
    "DynamoDBBackend",
    "DynamoDBClient",  # the one request and error-translation point, for adapters built on it
    "DynamoDBEventStore",
    "DynamoDBJournalStore",
    "DynamoDBRecordStore",
]


class DynamoDBBackend:
    """Records and journal in ``items_table``, events in ``events_table``, through ``client``.

    ``client`` is a boto3 DynamoDB client (``boto3.client("dynamodb")``), typed ``Any``
    because botocore ships no type information.
    """

    def __init__(
        self,
        client: Any,
        *,
        items_table: str,
        events_table: str,
        clock: Clock | None = None,
        index_objects: IndexObjectStore | None = None,
    ) -> None:
        self.items_table = items_table
        self.events_table = events_table
        self.clock: Clock = clock or SystemClock()
        self.index_objects = index_objects
        self._db = DynamoDBClient(client)

    def stores(self) -> Stores:
        """The backend's stores, sharing its client."""
        chunks = DynamoDBChunkStore(self._db, self.events_table)
        return Stores(
            records=DynamoDBRecordStore(
                self._db, self.items_table, self.clock, index_objects=self.index_objects
            ),
            events=DynamoDBEventStore(
                self._db, self.events_table, self.clock, chunks=chunks, items=self.items_table
            ),
            journal=DynamoDBJournalStore(self._db, self.items_table),
            owner=self,
            rollouts=DynamoDBRolloutStore(
                self._db, items=self.items_table, events=self.events_table, clock=self.clock
            ),
            memories=DynamoDBMemoryConfigStore(self._db, self.items_table),
            idempotency=DynamoDBIdempotencyStore(self._db, self.items_table),
            directory=DynamoDBRecordDirectory(self._db, self.items_table),
            chunks=chunks,
            jobs=DynamoDBJobLog(self._db, self.items_table),
            quarantine=DynamoDBQuarantineList(self._db, self.items_table),
            links=DynamoDBLinkStore(self._db, self.items_table),
            access=DynamoDBAccessCounts(self._db, self.items_table),
            generations=DynamoDBRecordGenerations(self._db, self.items_table),
            history_generations=DynamoDBHistoryGenerations(self._db, self.events_table),
            index_objects=self.index_objects,
            changes=DynamoDBChangeFeed(self._db, self.items_table),
        )

    def close(self) -> None:
        """Nothing to release: the client belongs to whoever injected it."""
