"""``RolloutStore.append_counted_batch`` on SQLite: the whole batch in one write transaction
(one commit, one fsync), planned by ``cairn.rollout.batch``."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from cairn.models import Event, EventInput, Scope
from cairn.rollout.batch import count_batch, sessions_of
from cairn.rollout.index import Appended, TriggerPolicy
from cairn.store.sqlite import append_keys
from cairn.store.sqlite.events import insert_event
from cairn.store.sqlite.rollout_rows import read_counters, save_counters, save_rollout


def append_batch(
    conn: sqlite3.Connection,
    scope: Scope,
    events: Sequence[EventInput],
    keys: Sequence[str | None],
    policy: TriggerPolicy | None,
    now: datetime,
) -> tuple[Appended, ...]:
    """Inside the caller's write transaction: each event not already stored under its key is
    inserted (and its key remembered), then counted; what was stored before is answered as
    stored and counted again never."""
    answers: list[Appended | None] = [None] * len(events)
    fresh: list[tuple[int, Event]] = []
    for i, (event, key) in enumerate(zip(events, keys, strict=True)):
        known = append_keys.stored_under(conn, scope, key, now)
        if known is not None:
            answers[i] = Appended(event=known)
            continue
        stored = insert_event(conn, scope, event, now)
        append_keys.remember(conn, scope, key, stored)
        fresh.append((i, stored))
    stored_events = [stored for _, stored in fresh]
    start = {}
    if policy is not None:
        start = {sid: read_counters(conn, scope, sid) for sid in sessions_of(stored_events)}
    counted = count_batch(start, stored_events, policy)
    for counters in counted.counters.values():
        save_counters(conn, counters)
    for claim in counted.claims:
        save_rollout(conn, claim)
    for (i, _), answer in zip(fresh, counted.answers, strict=True):
        answers[i] = answer
    return tuple(a for a in answers if a is not None)
