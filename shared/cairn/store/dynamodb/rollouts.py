"""``RolloutStore`` on DynamoDB: counters and rollouts in the items table, events beside them.

An append reads the session's counters (GetItem, strongly consistent), plans with
``cairn.rollout.index.count_append`` and sends ONE TransactWriteItems across both tables: the event
Put, the session and actor summary counts, the counters Put and, if a trigger fired, the new
rollout's Put. The conditions close these races:

- counters Put, ``v = :read`` (``attribute_not_exists(pk)`` for a session's first message): two
  writers that read the same counters cannot both commit; the loser's whole transaction is
  cancelled (its event is not written either), it reads again and counts on top of the winner.
  So every acknowledged event is counted exactly once, and a firing claims exactly one rollout.
- rollout Put, ``attribute_not_exists(pk)``: a claim never overwrites another.
- idle claim (the sweep) and close claim (``claim_session``): counters Put ``v = :read`` again, so
  a claim racing an append either claims before it (the append then counts into fresh
  counters) or fails; the sweep then leaves the session, a close reads it again and re-plans.
- rollout transitions: ``v = :read`` on the rollout item; consuming deletes ``P#`` on the same
  condition and puts ``C#``, in one transaction, so two deliveries consume it once.

Longer than 300 lines because one class implements the ``RolloutStore`` port, and each
method's condition expression sits beside the race it closes (the comment blocks above).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Sequence
from datetime import datetime

from cairn.errors import ConflictError, RolloutNotFoundError, StoreUnavailableError
from cairn.ids import new_event_id
from cairn.models import Event, EventInput, Scope
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, Clock, check_append_batch, check_append_key
from cairn.rollout.consumption import check_staged_evidence
from cairn.rollout.index import (
    EVIDENCE_ID_PREFIX,
    Appended,
    EventRef,
    Rollout,
    RolloutKind,
    RolloutState,
    SessionCounters,
    TriggerPolicy,
    advance,
    appended,
    claim_closed_session,
    claim_idle_session,
    count_append,
)
from cairn.store.dynamodb.append_batch import BatchTables, append_batch
from cairn.store.dynamodb.append_keys import guard_puts, stored_under
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    Item,
    check_item_size,
    decode_event,
    encode_time,
    event_item,
    events_pk,
    key,
    n,
    number,
    s,
    scope_pk,
    text,
)
from cairn.store.dynamodb.deletion_marks import mark_checks, raise_if_marked
from cairn.store.dynamodb.generations import history_bump
from cairn.store.dynamodb.rollout_codec import (
    CONSUMED_FROM,
    COUNTERS_FROM,
    PENDING_FROM,
    consumption_items,
    counters_item,
    counters_sk,
    decode_counters,
    decode_rollout,
    pending_sk,
    rollout_item,
    rollout_key,
)
from cairn.store.dynamodb.rollout_sweep import DueIndex
from cairn.store.dynamodb.summaries import SessionSummaries

# Writers contending on one session retry this many times before the caller hears
# StoreUnavailableError (retryable); with jittered backoff that covers dozens of writers.
_ATTEMPTS = 30


def _back_off(attempt: int) -> None:
    """Full jitter, 5 ms doubling to 200 ms: contenders spread out instead of colliding again."""
    if attempt:
        time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))  # noqa: S311 - not crypto


def _fresh_event(scope: Scope, event: EventInput, now: datetime) -> Event:
    return Event(
        **{name: getattr(event, name) for name in EventInput.model_fields},
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        event_id=new_event_id(event.event_timestamp),
        created_at=now,
    )


def conditional_put(table: str, item: Item, version: int) -> Item:
    """A Put that succeeds only over the version it was planned from (0: no item yet)."""
    put: Item = {"TableName": table, "Item": item}
    if version == 0:
        put["ConditionExpression"] = "attribute_not_exists(pk)"
    else:
        put["ConditionExpression"] = "#v = :read"
        put["ExpressionAttributeNames"] = {"#v": "v"}
        put["ExpressionAttributeValues"] = {":read": n(version)}
    return {"Put": put}


def new_rollout_put(table: str, claim: Rollout) -> Item:
    put = {
        "TableName": table,
        "Item": rollout_item(claim, version=1),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return {"Put": put}


class DynamoDBRolloutStore:
    """The rollout index in the items table; behaves exactly like ``InMemoryRolloutStore``."""

    def __init__(self, db: DynamoDBClient, *, items: str, events: str, clock: Clock) -> None:
        self._db = db
        self._items = items
        self._events = events
        self._clock = clock
        self._summaries = SessionSummaries(db, events)
        self._due = DueIndex(db, items)

    def append_counted(
        self,
        scope: Scope,
        event: EventInput,
        *,
        policy: TriggerPolicy | None,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Appended:
        """Append and count in one TransactWriteItems, re-planned while writers contend (a
        repeat under its key fails it on the key's guard and answers the first event)."""
        check_append_key(idempotency_key)
        stored = _fresh_event(scope, event, self._clock.now())
        item = event_item(scope, stored)
        check_item_size(item, "the event", "split its payload across several events")
        put = {
            "TableName": self._events,
            "Item": item,
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        base = [
            {"Put": put},
            *self._summaries.count_updates(scope, stored.session_id, +1, text(item, "ca")),
        ]
        base += guard_puts(self._events, scope, idempotency_key, item, stored.created_at)
        base += mark_checks(self._items, scope.memory_id, deletion_fence)
        base.append(history_bump(self._events, scope))
        for attempt in range(_ATTEMPTS):
            _back_off(attempt)
            current = self.counters(scope, stored.session_id) if policy is not None else None
            counted = count_append(current, stored, policy) if policy is not None else None
            writes = list(base)
            claim, counters = None, None
            if counted is not None:
                counters, claim = counted
                writes.append(
                    conditional_put(self._items, counters_item(counters), counters.version - 1)
                )
                if claim is not None:
                    writes.append(new_rollout_put(self._items, claim))
            try:
                self._db.transact(writes)
            except (ConflictError, StoreUnavailableError) as exc:
                raise_if_marked(self._db, self._items, scope.memory_id, deletion_fence)
                if isinstance(exc, ConflictError) and (
                    known := stored_under(
                        self._db, self._events, scope, idempotency_key, stored.created_at
                    )
                ):
                    return Appended(event=known)
                if not exc.retryable:
                    raise
                continue
            return appended(stored, current, counters, claim)
        raise StoreUnavailableError(
            f"session {stored.session_id!r} is taking appends faster than they can be counted; "
            "nothing was written, retry the append"
        )

    def append_counted_batch(
        self,
        scope: Scope,
        events: Sequence[EventInput],
        *,
        policy: TriggerPolicy | None,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> tuple[Appended, ...]:
        """The batch in one TransactWriteItems (``cairn.store.dynamodb.append_batch``)."""
        check_append_batch(events, idempotency_keys)
        keys = list(idempotency_keys or [None] * len(events))
        now = self._clock.now()
        stored = [_fresh_event(scope, event, now) for event in events]
        tables = BatchTables(self._db, self._items, self._events, self._summaries)
        return append_batch(
            tables,
            scope,
            stored,
            keys,
            policy,
            attempts=_ATTEMPTS,
            back_off=_back_off,
            counters=self.counters,
            conditional_put=conditional_put,
            rollout_put=new_rollout_put,
            one_by_one=lambda i: self.append_counted(
                scope, events[i], policy=policy, idempotency_key=keys[i]
            ),
        )

    def events_for(
        self, scope: Scope, session_id: str, refs: Sequence[EventRef]
    ) -> tuple[Event, ...]:
        """The named events (BatchGetItem by sort key), in the order given; deleted are absent."""
        pk = events_pk(scope, session_id)
        keys = {f"{encode_time(r.event_timestamp)}#{r.event_id}": r.event_id for r in refs}
        items = self._db.batch_get(
            self._events, [key(pk, sk) for sk in keys], projection="#d", names={"#d": "d"}
        )
        found = {event.event_id: event for event in map(decode_event, items)}
        return tuple(found[r.event_id] for r in refs if r.event_id in found)

    def counters(self, scope: Scope, session_id: str) -> SessionCounters | None:
        """The session's counters (GetItem, strongly consistent)."""
        item = self._get(key(scope_pk(scope), counters_sk(session_id)))
        return decode_counters(item) if item is not None else None

    def _get(self, item_key: Item) -> Item | None:
        found: Item | None = self._db.call(
            "get_item", TableName=self._items, Key=item_key, ConsistentRead=True
        ).get("Item")
        return found

    def get(self, scope: Scope, rollout_id: str) -> Rollout:
        """The rollout: its ``P#`` item, else its ``C#`` item (consumed); else not found."""
        return decode_rollout(self._find(scope, rollout_id))

    def _find(self, scope: Scope, rollout_id: str) -> Item:
        for consumed in (False, True):
            item = self._get(rollout_key(scope, rollout_id, consumed=consumed))
            if item is not None:
                return item
        raise RolloutNotFoundError(rollout_id)

    def list_pending(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, kind: RolloutKind | None = None
    ) -> tuple[Rollout, ...]:
        """The scope's ``P#`` items (evidence: ``P#ev-``), oldest claim first: one Query.
        Extraction rollouts alone are the ``P#`` items with evidence skipped."""
        check_limit(limit)
        prefix = pending_sk(EVIDENCE_ID_PREFIX) if kind == "evidence" else PENDING_FROM
        query = {
            "TableName": self._items,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":pk": s(scope_pk(scope)), ":p": s(prefix)},
            "ConsistentRead": True,
            "Limit": limit,
        }
        if kind != "extraction":
            items = self._db.call("query", **query).get("Items", [])
            return tuple(decode_rollout(item) for item in items)
        found = (decode_rollout(item) for item in self._db.query(**query))
        return tuple(itertools.islice((r for r in found if r.kind == kind), limit))

    def add_staged(self, scope: Scope, rollout: Rollout) -> Rollout:
        """Put the staged evidence rollout's ``P#`` item unless it, or its ``C#`` item (once
        consumed), exists: one TransactWriteItems; on a refusal the stored one is read back."""
        check_staged_evidence(scope, rollout)
        absent = {
            "TableName": self._items,
            "Key": rollout_key(scope, rollout.rollout_id, consumed=True),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        try:
            self._db.transact([new_rollout_put(self._items, rollout), {"ConditionCheck": absent}])
        except ConflictError:
            return self.get(scope, rollout.rollout_id)  # a restage: what is stored stands
        return rollout

    def mark(
        self,
        scope: Scope,
        rollout_id: str,
        state: RolloutState,
        *,
        now: datetime,
        staging_key: str | None = None,
        reason: str | None = None,
    ) -> Rollout:
        """Move the rollout as ``advance`` plans, conditional on the version it was read at."""
        for attempt in range(_ATTEMPTS):
            _back_off(attempt)
            item = self._find(scope, rollout_id)
            current = decode_rollout(item)
            moved = advance(current, state, now, staging_key=staging_key, reason=reason)
            if moved is None:
                return current
            try:
                self._db.transact(self._transition(item, moved))
            except ConflictError:
                continue  # another worker moved it first: read it again and re-plan
            return moved
        raise StoreUnavailableError(f"rollout {rollout_id!r} is changing too often; retry")

    def _transition(self, item: Item, moved: Rollout) -> list[Item]:
        version = number(item, "v")
        if moved.state is not RolloutState.CONSUMED:
            return [conditional_put(self._items, rollout_item(moved, version=version + 1), version)]
        return consumption_items(self._items, moved, version)

    def claim_idle(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Claim each session the ``due`` index shows idle at ``now``; a session whose counters
        moved since the index saw them is left for the next sweep."""
        check_limit(limit)
        claims: list[Rollout] = []
        for counters in map(decode_counters, self._due.idle(now, limit)):
            claimed = claim_idle_session(counters, now)
            if claimed is None:
                continue
            reset, claim = claimed
            if self._commit_claim(counters, reset, claim):
                claims.append(claim)
        return tuple(claims)

    def claim_session(self, scope: Scope, session_id: str, now: datetime) -> Rollout | None:
        """Claim the session's pending messages, conditional on the counters it read."""
        for attempt in range(_ATTEMPTS):
            _back_off(attempt)
            item = self._get(key(scope_pk(scope), counters_sk(session_id)))
            if item is None:
                return None
            counters = decode_counters(item)
            claimed = claim_closed_session(counters, now)
            if claimed is None:
                return None
            reset, claim = claimed
            if self._commit_claim(counters, reset, claim):
                return claim
            # an append counted into the session first: read it again
        raise StoreUnavailableError(f"session {session_id!r} is changing too often; retry")

    def _commit_claim(
        self, counters: SessionCounters, reset: SessionCounters, claim: Rollout
    ) -> bool:
        """Reset the counters read as ``counters`` and file ``claim``, in one transaction;
        False when another write moved the counters first (nothing is written)."""
        writes = [
            conditional_put(self._items, counters_item(reset), counters.version),
            new_rollout_put(self._items, claim),
        ]
        try:
            self._db.transact(writes)
        except ConflictError:
            return False
        return True

    def list_due(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Rollouts the ``due`` index shows due at ``now``, oldest first (one Query a shard)."""
        check_limit(limit)
        return tuple(map(decode_rollout, self._due.rollouts(now, limit)))

    def next_due(self) -> datetime | None:
        """The first entry of the ``due`` index (one Query of one item a shard and kind)."""
        return self._due.earliest()

    def erase_scope(self, scope: Scope) -> int:
        """Delete the scope's counters and rollouts: a Query per kind, 25 deletes a request."""
        keys: list[Item] = []
        for prefix in (COUNTERS_FROM, PENDING_FROM, CONSUMED_FROM):
            keys += [
                key(text(item, "pk"), text(item, "sk"))
                for item in self._db.query(
                    TableName=self._items,
                    KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                    ExpressionAttributeValues={":pk": s(scope_pk(scope)), ":p": s(prefix)},
                    ProjectionExpression="pk, sk",
                    ConsistentRead=True,
                )
            ]
        self._db.batch_delete(self._items, keys)
        return len(keys)
