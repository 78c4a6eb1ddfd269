"""Shared pieces of the rollout conformance tests: the capability check, policies, turns."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cairn.clock import FixedClock
from cairn.models import BlobPayload, Conversational, EventInput, Role, Scope
from cairn.ports import RolloutStore, Stores
from cairn.rollout.index import Appended, TriggerPolicy

STRATEGIES = ("facts-AbCdEf1234",)


def require_rollouts(stores: Stores, backend_name: str) -> RolloutStore:
    if stores.rollouts is None:
        pytest.skip(f"backend {backend_name!r} has no RolloutStore (capability missing)")
    return stores.rollouts


def policy(**conditions: int) -> TriggerPolicy:
    return TriggerPolicy(strategy_ids=STRATEGIES, **conditions)


def turn(
    text: str, *, session_id: str = "s1", clock: FixedClock, role: Role = Role.USER
) -> EventInput:
    """A one-message event stamped with the clock's time (which then moves on by 1 ms)."""
    event = EventInput(
        session_id=session_id,
        event_timestamp=clock.now(),
        payload=(Conversational(role=role, text=text),),
    )
    clock.advance(milliseconds=1)
    return event


def blob_only(*, session_id: str = "s1", clock: FixedClock) -> EventInput:
    return EventInput(
        session_id=session_id,
        event_timestamp=clock.now(),
        payload=(BlobPayload(blob={"tool": "weather", "ok": True}),),
    )


def append_turns(
    rollouts: RolloutStore,
    scope: Scope,
    count: int,
    *,
    clock: FixedClock,
    policy: TriggerPolicy | None,
    session_id: str = "s1",
) -> list[Appended]:
    return [
        rollouts.append_counted(
            scope, turn(f"message {i}", session_id=session_id, clock=clock), policy=policy
        )
        for i in range(count)
    ]


def later(clock: FixedClock, seconds: float) -> None:
    clock.advance(timedelta(seconds=seconds))
