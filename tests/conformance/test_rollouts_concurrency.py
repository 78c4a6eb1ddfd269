"""Many writers on one session: every acknowledged event is counted into exactly one rollout,
and each firing of a count trigger claims exactly one rollout.

On DynamoDB the writers share one client whose requests moto answers one at a time (moto's
in-process backend is not thread-safe; DynamoDB itself makes each request atomic). The race
that matters, two writers reading the same counters and both trying to commit, still happens
between requests, and only the store's conditions can settle it.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role
from cairn.ports import RolloutStore, Stores
from cairn.rollout.index import Rollout
from tests.conformance.rollout_samples import policy, require_rollouts
from tests.conformance.samples import SCOPE

WRITERS = 8
EVENTS_EACH = 6
MESSAGE_COUNT = 4


class OneRequestAtATime:
    """A boto3 client whose requests never overlap: what moto needs, and all DynamoDB gives."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        def serialised(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return method(*args, **kwargs)

        return serialised


def _rollouts(stores: Stores, backend_name: str, tmp_path: Path, clock: FixedClock) -> RolloutStore:
    rollouts = require_rollouts(stores, backend_name)
    if backend_name != "dynamodb":
        return rollouts
    import boto3

    from cairn.store.dynamodb import DynamoDBBackend
    from tests.conformance.backends import _moto_client

    names = json.loads((tmp_path / "dynamodb-tables.json").read_text())
    backend = DynamoDBBackend(
        OneRequestAtATime(_moto_client(boto3, "dynamodb")),
        items_table=names["items"],
        events_table=names["events"],
        clock=clock,
    )
    found = backend.stores().rollouts
    assert found is not None
    return found


def _write_concurrently(write: Callable[[int, int], Rollout | None]) -> list[Rollout]:
    def writer(w: int) -> list[Rollout]:
        return [c for i in range(EVENTS_EACH) if (c := write(w, i)) is not None]

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        return [claim for claims in pool.map(writer, range(WRITERS)) for claim in claims]


def test_many_writers_on_one_session_claim_exactly_one_rollout_per_firing(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    rollouts = _rollouts(stores, backend_name, tmp_path, clock)
    count = policy(message_count=MESSAGE_COUNT)
    acknowledged: list[str] = []

    def write(writer: int, i: int) -> Rollout | None:
        event = EventInput(
            session_id="s1",
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=f"writer {writer} says {i}"),),
        )
        appended = rollouts.append_counted(SCOPE, event, policy=count)
        acknowledged.append(appended.event.event_id)
        return appended.claim

    claims = _write_concurrently(write)

    total = WRITERS * EVENTS_EACH
    assert len(acknowledged) == total
    assert len(claims) == total // MESSAGE_COUNT
    assert all(len(c.events) == MESSAGE_COUNT for c in claims)
    in_rollouts = Counter(ref.event_id for c in claims for ref in c.events)
    assert set(in_rollouts) == set(acknowledged)
    assert max(in_rollouts.values()) == 1
    assert set(rollouts.list_pending(SCOPE, limit=1000)) == set(claims)


def test_writers_racing_the_idle_sweep_never_lose_or_repeat_an_event(
    stores: Stores, backend_name: str, clock: FixedClock, tmp_path: Path
) -> None:
    rollouts = _rollouts(stores, backend_name, tmp_path, clock)
    both = policy(message_count=5, idle_timeout_seconds=10)
    acknowledged: list[str] = []
    swept: list[Rollout] = []
    done = threading.Event()

    def sweep() -> None:
        while not done.is_set():
            swept.extend(rollouts.claim_idle(clock.now() + timedelta(hours=1)))

    def write(writer: int, i: int) -> Rollout | None:
        event = EventInput(
            session_id="s1",
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=f"writer {writer} says {i}"),),
        )
        appended = rollouts.append_counted(SCOPE, event, policy=both)
        acknowledged.append(appended.event.event_id)
        return appended.claim

    sweeper = threading.Thread(target=sweep)
    sweeper.start()
    try:
        claims = _write_concurrently(write)
    finally:
        done.set()
        sweeper.join()
    claims += swept + list(rollouts.claim_idle(clock.now() + timedelta(hours=1)))

    in_rollouts = Counter(ref.event_id for c in claims for ref in c.events)
    assert set(in_rollouts) == set(acknowledged)
    assert len(acknowledged) == WRITERS * EVENTS_EACH
    assert max(in_rollouts.values()) == 1
