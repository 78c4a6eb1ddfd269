"""``EventStore`` on DynamoDB (the journal is in ``journal``).

An event is one item in its session's partition, sorted by (timestamp, event id). Appending
it and counting it are one transaction: the session summary (``S#<scope>``, sort key = session
id, ``n`` events, ``c`` first creation time) and the actor summary (``A#<memory>``, sort key =
actor id, ``n`` events) move with it, so sessions and actors are listed by one Query each and a
crash never leaves a count that disagrees with the events.

Longer than 300 lines because the two stores share their Query helpers (the bottom of the
module), and the append keeps its idempotency key's guard beside the transaction it joins.
"""

from __future__ import annotations

from typing import Any

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import ConflictError, EventNotFoundError, InvalidCursorError
from cairn.ids import new_event_id
from cairn.models import Event, EventInput, Page, Scope, SessionSummary
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, Clock, check_append_key
from cairn.store.dynamodb.append_keys import forget_scope, guard_puts, stored_under
from cairn.store.dynamodb.chunks import DynamoDBChunkStore
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    Item,
    actors_pk,
    check_item_size,
    decode_event,
    decode_time,
    event_item,
    event_sk,
    events_pk,
    key,
    n,
    number,
    s,
    sessions_pk,
    text,
)
from cairn.store.dynamodb.deletion_marks import mark_checks, raise_if_marked
from cairn.store.dynamodb.generations import DynamoDBHistoryGenerations, history_bump
from cairn.store.dynamodb.schema import EVENT_ID_INDEX
from cairn.store.dynamodb.summaries import SessionSummaries

_COUNT = {"#n": "n"}


class DynamoDBEventStore:
    """Events in the events table; behaves exactly like ``InMemoryEventStore``."""

    def __init__(
        self,
        db: DynamoDBClient,
        table: str,
        clock: Clock,
        *,
        chunks: DynamoDBChunkStore | None = None,
        items: str = "",
    ) -> None:
        self._db = db
        self._table = table
        self._items = items  # where the deletion marks are (``deletion_marks``)
        self._clock = clock
        self._chunks = chunks
        self._summaries = SessionSummaries(db, table)

    def append(
        self,
        scope: Scope,
        event: EventInput,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Event:
        """Store one immutable event and count it: one TransactWriteItems (with the key's
        guard, ``append_keys``; a repeat fails it and answers with the first event)."""
        check_append_key(idempotency_key)
        stored = Event(
            **{name: getattr(event, name) for name in EventInput.model_fields},
            memory_id=scope.memory_id,
            actor_id=scope.actor_id,
            event_id=new_event_id(event.event_timestamp),
            created_at=self._clock.now(),
        )
        item = event_item(scope, stored)
        check_item_size(item, "the event", "split its payload across several events")
        put = {
            "TableName": self._table,
            "Item": item,
            # Event ids are random; the condition only guarantees an append never overwrites.
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        counted = self._summaries.count_updates(scope, stored.session_id, +1, text(item, "ca"))
        guard = guard_puts(self._table, scope, idempotency_key, item, stored.created_at)
        marked = mark_checks(self._items, scope.memory_id, deletion_fence)
        try:
            self._db.transact(
                [{"Put": put}, *counted, *guard, history_bump(self._table, scope), *marked]
            )
        except ConflictError:
            raise_if_marked(self._db, self._items, scope.memory_id, deletion_fence)
            known = stored_under(self._db, self._table, scope, idempotency_key, stored.created_at)
            if known is None:
                raise
            return known
        return stored

    def get_event(self, scope: Scope, session_id: str, event_id: str) -> Event:
        """The event; ``EventNotFoundError`` outside this scope and session (Query + GetItem)."""
        found = self._find(scope, session_id, event_id)
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(text(found, "pk"), text(found, "sk")),
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            raise EventNotFoundError(event_id)
        return decode_event(item)

    def _find(self, scope: Scope, session_id: str, event_id: str) -> Item:
        """The event's keys and creation time, through the local ``by_event_id`` index."""
        items = self._db.call(
            "query",
            TableName=self._table,
            IndexName=EVENT_ID_INDEX.name,
            KeyConditionExpression="pk = :pk AND eid = :eid",
            ExpressionAttributeValues={
                ":pk": s(events_pk(scope, session_id)),
                ":eid": s(event_id),
            },
            ConsistentRead=True,
        ).get("Items", [])
        if not items:
            raise EventNotFoundError(event_id)
        found: Item = items[0]
        return found

    def list_events(
        self,
        scope: Scope,
        session_id: str,
        *,
        branch: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[Event]:
        """The session's events in (timestamp, event id) order: one Query a page."""
        check_limit(limit)
        query: dict[str, Any] = {"session": session_id, "branch": branch}
        after = _string_position(str(scope), query, cursor)
        request = _after_query(self._table, events_pk(scope, session_id), after, limit)
        if branch is not None:
            request["FilterExpression"] = "#br = :br"
            request["ExpressionAttributeNames"] = {"#br": "br"}
            request["ExpressionAttributeValues"][":br"] = s(branch)
        events = [decode_event(item) for item in _first(self._db, request, limit + 1)]
        page = tuple(events[:limit])
        more = len(events) > limit
        next_cursor = encode_cursor(str(scope), query, event_sk(page[-1])) if more else None
        return Page[Event](items=page, next_cursor=next_cursor)

    def list_sessions(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[SessionSummary]:
        """The actor's sessions that hold events, by session id: one Query a page."""
        check_limit(limit)
        after = _string_position(str(scope), {}, cursor)
        rows = self._counted(sessions_pk(scope), after, limit)
        sessions = tuple(
            SessionSummary(
                actor_id=scope.actor_id,
                session_id=text(row, "sk"),
                created_at=decode_time(text(row, "c")),
            )
            for row in rows[:limit]
        )
        more = len(rows) > limit
        next_cursor = encode_cursor(str(scope), {}, sessions[-1].session_id) if more else None
        return Page[SessionSummary](items=sessions, next_cursor=next_cursor)

    def list_actors(
        self, memory_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[str]:
        """Actor ids with events in this memory, sorted: one Query a page."""
        check_limit(limit)
        scope_key = f"memory:{memory_id}"
        after = _string_position(scope_key, {}, cursor)
        rows = self._counted(actors_pk(memory_id), after, limit)
        actors = tuple(text(row, "sk") for row in rows[:limit])
        next_cursor = encode_cursor(scope_key, {}, actors[-1]) if len(rows) > limit else None
        return Page[str](items=actors, next_cursor=next_cursor)

    def _counted(self, pk: str, after: str | None, limit: int) -> list[Item]:
        """Summary items with at least one event (a zero count can linger briefly)."""
        request = _after_query(self._table, pk, after, limit)
        request["FilterExpression"] = "#n > :zero"
        request["ExpressionAttributeNames"] = _COUNT
        request["ExpressionAttributeValues"][":zero"] = n(0)
        return _first(self._db, request, limit + 1)

    def delete_event(self, scope: Scope, session_id: str, event_id: str) -> None:
        """Delete one event and uncount it; ``EventNotFoundError`` if absent."""
        found = self._find(scope, session_id, event_id)
        if self._chunks is not None:
            # Summaries first: a crash between never leaves a summary of a deleted turn.
            self._chunks.forget_turn(scope, session_id, event_id)
        delete = {
            "TableName": self._table,
            "Key": key(text(found, "pk"), text(found, "sk")),
            "ConditionExpression": "attribute_exists(pk)",  # deleted meanwhile: not found
        }
        counted = self._summaries.count_updates(scope, session_id, -1, text(found, "ca"))
        try:
            self._db.transact([{"Delete": delete}, *counted, history_bump(self._table, scope)])
        except ConflictError as exc:
            raise EventNotFoundError(event_id) from exc
        self._summaries.settle(scope, session_id, deleted_created_at=text(found, "ca"))

    def erase_scope(self, scope: Scope) -> int:
        """Delete every event of the actor; returns how many were deleted.

        Session by session: its events (25 deletes a request), then its summary; the actor's
        summary last. Safe to run again after a failure; an event appended while it runs
        keeps its summary and so is found by the next run.
        """
        actor_key = key(actors_pk(scope.memory_id), scope.actor_id)
        actor_seen = self._summaries.count_of(actor_key)
        deleted = 0
        for row in self._db.query(**_after_query(self._table, sessions_pk(scope), None, None)):
            session_id = text(row, "sk")
            keys = [
                key(text(item, "pk"), text(item, "sk"))
                for item in self._db.query(
                    **_after_query(self._table, events_pk(scope, session_id), None, None),
                    ProjectionExpression="pk, sk",
                )
            ]
            self._db.batch_delete(self._table, keys)
            session_key = key(sessions_pk(scope), session_id)
            self._summaries.forget(session_key, seen=number(row, "n"), deleted=len(keys))
            deleted += len(keys)
        forget_scope(self._db, self._table, scope)
        self._summaries.forget(actor_key, seen=actor_seen, deleted=deleted)
        DynamoDBHistoryGenerations(self._db, self._table).forget(scope)
        return deleted


def _after_query(table: str, pk: str, after: str | None, limit: int | None) -> dict[str, Any]:
    """A strongly consistent Query of partition ``pk`` from just after sort key ``after``."""
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": s(pk)},
        "ConsistentRead": True,
    }
    if after is not None:
        request["KeyConditionExpression"] += " AND sk > :after"
        request["ExpressionAttributeValues"][":after"] = s(after)
    if limit is not None:
        request["Limit"] = limit + 1
    return request


def _first(db: DynamoDBClient, request: dict[str, Any], count: int) -> list[Item]:
    found: list[Item] = []
    for item in db.query(**request):
        found.append(item)
        if len(found) == count:
            break
    return found


def _string_position(scope_key: str, query: dict[str, Any], cursor: str | None) -> str | None:
    if cursor is None:
        return None
    position = decode_cursor(scope_key, query, cursor)
    if not isinstance(position, str):
        raise InvalidCursorError(
            "pagination cursor is malformed; pass back the next token exactly as returned"
        )
    return position
