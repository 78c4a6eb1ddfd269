"""Session and actor summaries: event counts that make sessions and actors listable.

``n`` is changed only in the same transaction as the events it counts (or, in ``erase_scope``,
right after deleting them), so it is exact. A summary is deleted only by a delete conditioned
on ``n <= 0``: an append racing the delete raises ``n`` first and the delete then fails,
instead of hiding the new event's session. ``c`` is the earliest ``created_at`` among the
session's events; deleting that event recomputes it.
"""

from __future__ import annotations

import contextlib
from typing import Any

from cairn.errors import ConflictError
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    Item,
    actors_pk,
    events_pk,
    key,
    n,
    number,
    s,
    sessions_pk,
    text,
)

_NAMES = {"#n": "n", "#c": "c"}


class SessionSummaries:
    """The ``S#`` and ``A#`` summary items of the events table."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def count_updates(self, scope: Scope, session_id: str, delta: int, at: str) -> list[Item]:
        """TransactItems moving both counts by ``delta`` (an append also sets ``c`` once)."""
        session: dict[str, Any] = {
            "TableName": self._table,
            "Key": key(sessions_pk(scope), session_id),
            "UpdateExpression": "ADD #n :delta",
            "ExpressionAttributeNames": {"#n": "n"},
            "ExpressionAttributeValues": {":delta": n(delta)},
        }
        if delta > 0:
            session["UpdateExpression"] += " SET #c = if_not_exists(#c, :at)"
            session["ExpressionAttributeNames"] = _NAMES
            session["ExpressionAttributeValues"][":at"] = s(at)
        actor = {
            "TableName": self._table,
            "Key": key(actors_pk(scope.memory_id), scope.actor_id),
            "UpdateExpression": "ADD #n :delta",
            "ExpressionAttributeNames": {"#n": "n"},
            "ExpressionAttributeValues": {":delta": n(delta)},
        }
        return [{"Update": session}, {"Update": actor}]

    def settle(self, scope: Scope, session_id: str, *, deleted_created_at: str) -> None:
        """After a delete: drop emptied summaries, recompute ``c`` if its event went."""
        session_key = key(sessions_pk(scope), session_id)
        actor_key = key(actors_pk(scope.memory_id), scope.actor_id)
        rows = self._db.batch_get(
            self._table, [session_key, actor_key], projection="pk, #n, #c", names=_NAMES
        )
        by_pk = {text(row, "pk"): row for row in rows}
        actor = by_pk.get(text(actor_key, "pk"))
        if actor is not None and number(actor, "n") <= 0:
            self._drop_if_empty(actor_key)
        session = by_pk.get(text(session_key, "pk"))
        if session is None:
            return
        if number(session, "n") <= 0:
            self._drop_if_empty(session_key)
        elif text(session, "c") == deleted_created_at:
            self._recompute_first(scope, session_id)

    def count_of(self, summary_key: Item) -> int | None:
        """The summary's event count, ``None`` when there is no summary."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=summary_key,
            ConsistentRead=True,
            ProjectionExpression="#n",
            ExpressionAttributeNames={"#n": "n"},
        ).get("Item")
        return None if found is None else number(found, "n")

    def forget(self, summary_key: Item, *, seen: int | None, deleted: int) -> None:
        """After deleting ``deleted`` events of a summary that counted ``seen``: drop it if
        nothing was appended since (also right after a crashed erase left it stale), else
        subtract what was deleted."""
        if seen is not None:
            try:
                self._db.call(
                    "delete_item",
                    TableName=self._table,
                    Key=summary_key,
                    ConditionExpression="#n = :seen",
                    ExpressionAttributeNames={"#n": "n"},
                    ExpressionAttributeValues={":seen": n(seen)},
                )
            except ConflictError:
                pass  # appended meanwhile: those events keep their summary
            else:
                return
        if deleted:
            self._uncount(summary_key, deleted)

    def _uncount(self, summary_key: Item, deleted: int) -> None:
        """Subtract ``deleted`` events from a summary, dropping it once it counts none."""
        left = self._db.call(
            "update_item",
            TableName=self._table,
            Key=summary_key,
            UpdateExpression="ADD #n :minus",
            ExpressionAttributeNames={"#n": "n"},
            ExpressionAttributeValues={":minus": n(-deleted)},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]
        if number(left, "n") <= 0:
            self._drop_if_empty(summary_key)

    def _drop_if_empty(self, summary_key: Item) -> None:
        # A failed condition means an append counted a new event meanwhile: keep the summary.
        with contextlib.suppress(ConflictError):
            self._db.call(
                "delete_item",
                TableName=self._table,
                Key=summary_key,
                ConditionExpression="#n <= :zero",
                ExpressionAttributeNames={"#n": "n"},
                ExpressionAttributeValues={":zero": n(0)},
            )

    def _recompute_first(self, scope: Scope, session_id: str) -> None:
        times = [
            text(item, "ca")
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(events_pk(scope, session_id))},
                ProjectionExpression="ca",
                ConsistentRead=True,
            )
        ]
        if not times:
            return
        # A failed condition means the session emptied meanwhile and its summary is going.
        with contextlib.suppress(ConflictError):
            self._db.call(
                "update_item",
                TableName=self._table,
                Key=key(sessions_pk(scope), session_id),
                UpdateExpression="SET #c = :first",
                ConditionExpression="#n > :zero",
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={":first": s(min(times)), ":zero": n(0)},
            )
