"""The reference ``RolloutStore``, in memory: the executable reading of the rollout contract.

Counting happens under the owning ``InMemoryBackend``'s lock, in the same critical section as
the append, so concurrent writers on one session see one counter and one claim per firing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cairn.errors import RolloutNotFoundError
from cairn.models import Event, EventInput, Scope
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, EventStore, check_append_batch, check_append_key
from cairn.rollout.batch import count_batch, sessions_of
from cairn.rollout.consumption import check_staged_evidence
from cairn.rollout.index import (
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
    due_at,
)
from cairn.store.memory.append_keys import AppendKeys

SessionKey = tuple[Scope, str]
EventRows = dict[Scope, dict[str, dict[str, Event]]]


@dataclass
class RolloutRows:
    """Counters by (scope, session) and rollouts by scope then id."""

    counters: dict[SessionKey, SessionCounters] = field(default_factory=dict)
    rollouts: dict[Scope, dict[str, Rollout]] = field(default_factory=dict)


class InMemoryRolloutStore:
    def __init__(
        self,
        lock: threading.RLock,
        events: EventStore,
        event_rows: EventRows,
        rows: RolloutRows,
        *,
        keys: AppendKeys,
    ) -> None:
        self._keys = keys
        self._lock = lock
        self._events = events
        self._event_rows = event_rows
        self._rows = rows

    def append_counted(
        self,
        scope: Scope,
        event: EventInput,
        *,
        policy: TriggerPolicy | None,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Appended:
        check_append_key(idempotency_key)
        with self._lock:  # re-entrant: the append below takes it too
            known = self._keys.stored(scope, idempotency_key)
            if known is not None and not deletion_fence:
                return Appended(event=known)
            stored = self._events.append(
                scope, event, idempotency_key=idempotency_key, deletion_fence=deletion_fence
            )
            if policy is None:
                return Appended(event=stored)
            key = (scope, stored.session_id)
            counted = count_append(self._rows.counters.get(key), stored, policy)
            if counted is None:
                return Appended(event=stored)
            counters, claim = counted
            before = self._rows.counters.get(key)
            self._rows.counters[key] = counters
            if claim is not None:
                self._rows.rollouts.setdefault(scope, {})[claim.rollout_id] = claim
            return appended(stored, before, counters, claim)

    def append_counted_batch(
        self,
        scope: Scope,
        events: Sequence[EventInput],
        *,
        policy: TriggerPolicy | None,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> tuple[Appended, ...]:
        check_append_batch(events, idempotency_keys)
        keys = list(idempotency_keys or [None] * len(events))
        with self._lock:  # one writer at a time: the batch is seen whole or not at all
            answers: list[Appended | None] = [None] * len(events)
            fresh: list[tuple[int, Event]] = []
            for i, (event, key) in enumerate(zip(events, keys, strict=True)):
                known = self._keys.stored(scope, key)
                if known is not None:
                    answers[i] = Appended(event=known)
                    continue
                fresh.append((i, self._events.append(scope, event, idempotency_key=key)))
            stored = [event for _, event in fresh]
            start = {sid: self._rows.counters.get((scope, sid)) for sid in sessions_of(stored)}
            counted = count_batch(start, stored, policy)
            for session_id, counters in counted.counters.items():
                self._rows.counters[(scope, session_id)] = counters
            for claim in counted.claims:
                self._rows.rollouts.setdefault(scope, {})[claim.rollout_id] = claim
            for (i, _), answer in zip(fresh, counted.answers, strict=True):
                answers[i] = answer
            return tuple(a for a in answers if a is not None)

    def events_for(
        self, scope: Scope, session_id: str, refs: Sequence[EventRef]
    ) -> tuple[Event, ...]:
        with self._lock:
            session = self._event_rows.get(scope, {}).get(session_id, {})
            found = (session.get(ref.event_id) for ref in refs)
            return tuple(event for event in found if event is not None)

    def counters(self, scope: Scope, session_id: str) -> SessionCounters | None:
        with self._lock:
            return self._rows.counters.get((scope, session_id))

    def get(self, scope: Scope, rollout_id: str) -> Rollout:
        with self._lock:
            found = self._rows.rollouts.get(scope, {}).get(rollout_id)
        if found is None:
            raise RolloutNotFoundError(rollout_id)
        return found

    def list_pending(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, kind: RolloutKind | None = None
    ) -> tuple[Rollout, ...]:
        check_limit(limit)
        with self._lock:
            rollouts = self._rows.rollouts.get(scope, {}).values()
            pending = sorted(
                (r for r in rollouts if r.pending and kind in (None, r.kind)),
                key=lambda r: r.rollout_id,
            )
        return tuple(pending[:limit])

    def add_staged(self, scope: Scope, rollout: Rollout) -> Rollout:
        check_staged_evidence(scope, rollout)
        with self._lock:
            return self._rows.rollouts.setdefault(scope, {}).setdefault(rollout.rollout_id, rollout)

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
        with self._lock:
            current = self.get(scope, rollout_id)
            moved = advance(current, state, now, staging_key=staging_key, reason=reason)
            if moved is None:
                return current
            self._rows.rollouts[scope][rollout_id] = moved
            return moved

    def claim_idle(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        check_limit(limit)
        claims: list[Rollout] = []
        with self._lock:
            idle = sorted(
                (c for c in self._rows.counters.values() if c.idle_due_at and c.idle_due_at <= now),
                key=lambda c: (c.idle_due_at, str(c.scope), c.session_id),
            )
            for counters in idle[:limit]:
                claimed = claim_idle_session(counters, now)
                if claimed is None:
                    continue
                reset, claim = claimed
                self._rows.counters[(counters.scope, counters.session_id)] = reset
                self._rows.rollouts.setdefault(counters.scope, {})[claim.rollout_id] = claim
                claims.append(claim)
        return tuple(claims)

    def claim_session(self, scope: Scope, session_id: str, now: datetime) -> Rollout | None:
        with self._lock:
            counters = self._rows.counters.get((scope, session_id))
            claimed = claim_closed_session(counters, now) if counters is not None else None
            if claimed is None:
                return None
            reset, claim = claimed
            self._rows.counters[(scope, session_id)] = reset
            self._rows.rollouts.setdefault(scope, {})[claim.rollout_id] = claim
            return claim

    def list_due(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        check_limit(limit)
        with self._lock:
            due = [
                (when, rollout.rollout_id, rollout)
                for rollouts in self._rows.rollouts.values()
                for rollout in rollouts.values()
                if (when := due_at(rollout)) is not None and when <= now
            ]
        due.sort(key=lambda entry: (entry[0], entry[1]))
        return tuple(rollout for _, _, rollout in due[:limit])

    def next_due(self) -> datetime | None:
        with self._lock:
            idle = [c.idle_due_at for c in self._rows.counters.values() if c.pending]
            due = [
                due_at(r) for rollouts in self._rows.rollouts.values() for r in rollouts.values()
            ]
        return min((when for when in (*idle, *due) if when is not None), default=None)

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            sessions = [key for key in self._rows.counters if key[0] == scope]
            for key in sessions:
                del self._rows.counters[key]
            return len(sessions) + len(self._rows.rollouts.pop(scope, {}))
