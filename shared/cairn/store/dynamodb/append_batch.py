"""``RolloutStore.append_counted_batch`` on DynamoDB: the whole batch in one TransactWriteItems.

The transaction holds each event's Put (and its key's guard), one count update per session and
one for the actor (DynamoDB refuses two actions on one item), each session's counters as the
batch leaves them (conditioned on the version read), and every rollout the batch claims, as
planned by ``cairn.rollout.batch``. Contention with another writer re-reads and re-plans, as a
single append does; a guard that refuses names an event already stored, which is answered as
stored and left out of the next attempt, so a retried batch stores only what did not land. A
batch beyond one transaction's limits (100 actions, 4 MB) is appended event by event instead,
each under its own key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cairn.errors import ConflictError, StoreUnavailableError
from cairn.models import Event, Scope
from cairn.rollout.batch import count_batch, sessions_of
from cairn.rollout.index import Appended, Rollout, SessionCounters, TriggerPolicy
from cairn.store.dynamodb.append_keys import guard_puts, stored_under
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, check_item_size, event_item, item_size, n, text
from cairn.store.dynamodb.generations import history_bump
from cairn.store.dynamodb.rollout_codec import counters_item
from cairn.store.dynamodb.summaries import SessionSummaries

# TransactWriteItems takes 100 actions; the client may add its commit proof.
MAX_ACTIONS = 99
MAX_REQUEST_BYTES = 3 * 2**20  # under the 4 MB a transaction may carry, with room for keys

CounterReader = Callable[[Scope, str], SessionCounters | None]
ConditionalPut = Callable[[str, Item, int], Item]
RolloutPut = Callable[[str, Rollout], Item]


@dataclass(frozen=True)
class BatchTables:
    """What the batch writes through: the client, the two tables, the session summaries."""

    db: DynamoDBClient
    items: str
    events: str
    summaries: SessionSummaries


def append_batch(
    tables: BatchTables,
    scope: Scope,
    stored: Sequence[Event],
    keys: Sequence[str | None],
    policy: TriggerPolicy | None,
    *,
    attempts: int,
    back_off: Callable[[int], None],
    counters: CounterReader,
    conditional_put: ConditionalPut,
    rollout_put: RolloutPut,
    one_by_one: Callable[[int], Appended],
) -> tuple[Appended, ...]:
    """Append ``stored`` (fresh events, ids and times assigned) under ``keys``; see the
    module docstring."""
    items = [event_item(scope, event) for event in stored]
    for item in items:
        check_item_size(item, "the event", "split its payload across several events")
    answers: dict[int, Appended] = {}
    pending = list(range(len(stored)))
    for attempt in range(attempts):
        back_off(attempt)
        fresh = [stored[i] for i in pending]
        start = {sid: counters(scope, sid) for sid in sessions_of(fresh)} if policy else {}
        counted = count_batch(start, fresh, policy)
        writes = _writes(tables, scope, pending, items, keys, stored)
        writes.append(history_bump(tables.events, scope))
        writes += [
            conditional_put(tables.items, counters_item(c), _read(start, sid))
            for sid, c in counted.counters.items()
        ]
        writes += [rollout_put(tables.items, claim) for claim in counted.claims]
        if len(writes) > MAX_ACTIONS or sum(map(item_size, items)) > MAX_REQUEST_BYTES:
            answers.update((i, one_by_one(i)) for i in pending)
            return tuple(answers[i] for i in range(len(stored)))
        try:
            tables.db.transact(writes)
        except (ConflictError, StoreUnavailableError) as exc:
            if isinstance(exc, ConflictError):
                known = _already_stored(tables, scope, [(i, keys[i]) for i in pending], stored)
                if known:
                    answers.update(known)
                    pending = [i for i in pending if i not in known]
                    if not pending:
                        return tuple(answers[i] for i in range(len(stored)))
                    continue
            if not exc.retryable:
                raise
            continue
        answers.update(zip(pending, counted.answers, strict=True))
        return tuple(answers[i] for i in range(len(stored)))
    raise StoreUnavailableError(
        "the session is taking appends faster than they can be counted; nothing of this "
        "batch's remaining events was written, retry the batch"
    )


def _read(start: dict[str, SessionCounters | None], session_id: str) -> int:
    before = start.get(session_id)
    return before.version if before is not None else 0


def _writes(
    tables: BatchTables,
    scope: Scope,
    pending: Sequence[int],
    items: Sequence[Item],
    keys: Sequence[str | None],
    stored: Sequence[Event],
) -> list[Item]:
    """The events' Puts and guards, and the count updates merged per session and actor."""
    writes: list[Item] = []
    per_session: dict[str, int] = {}
    for i in pending:
        put = {
            "TableName": tables.events,
            "Item": items[i],
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        writes.append({"Put": put})
        writes += guard_puts(tables.events, scope, keys[i], items[i], stored[i].created_at)
        per_session[stored[i].session_id] = per_session.get(stored[i].session_id, 0) + 1
    actor: Item | None = None
    at = text(items[pending[0]], "ca")
    for session_id, count in per_session.items():
        session_update, actor = tables.summaries.count_updates(scope, session_id, count, at)
        writes.append(session_update)
    if actor is not None:
        actor["Update"]["ExpressionAttributeValues"][":delta"] = n(len(pending))
        writes.append(actor)
    return writes


def _already_stored(
    tables: BatchTables,
    scope: Scope,
    keyed: Sequence[tuple[int, str | None]],
    stored: Sequence[Event],
) -> dict[int, Appended]:
    """The events of the batch a guard names as stored already (by an earlier attempt)."""
    found: dict[int, Appended] = {}
    for i, key in keyed:
        event = stored_under(tables.db, tables.events, scope, key, stored[i].created_at)
        if event is not None:
            found[i] = Appended(event=event)
    return found
