"""Generations of a scope's turns and chunks (``Stores.history_generations``): every committed
append, counted append, deletion, chunk written or deleted and erasure moves the scope's
generation, a read moves nothing, and another scope's writes leave it be."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from datetime import UTC, datetime, timedelta

import pytest

from cairn.erasure import erase_session
from cairn.history.pyramid import level_one_chunk
from cairn.history.turns import turns_after
from cairn.models import Conversational, EventInput, Role
from cairn.ports import HistoryGenerations, Stores
from cairn.rollout.index import TriggerPolicy
from tests.conformance.samples import OTHER_ACTOR, SCOPE

T0 = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)


def _generations(stores: Stores) -> HistoryGenerations:
    if stores.history_generations is None:
        pytest.skip("this backend keeps no history generations (recall lists history anew)")
    return stores.history_generations


def _turn(i: int, session: str = "s1") -> EventInput:
    return EventInput(
        session_id=session,
        event_timestamp=T0 + timedelta(minutes=i),
        payload=(Conversational(role=Role.USER, text=f"turn {i}"),),
    )


def _moves(generations: HistoryGenerations, write: Callable[[], object]) -> bool:
    before: Hashable = generations.generation(SCOPE)
    write()
    return generations.generation(SCOPE) != before


def test_every_append_and_deletion_of_a_turn_moves_the_generation(stores: Stores) -> None:
    generations = _generations(stores)
    events = [stores.events.append(SCOPE, _turn(0))]
    assert _moves(generations, lambda: events.append(stores.events.append(SCOPE, _turn(1))))
    assert _moves(generations, lambda: stores.events.delete_event(SCOPE, "s1", events[0].event_id))
    # Append then delete comes back to the same turns, never to the same generation.
    before = generations.generation(SCOPE)
    added = stores.events.append(SCOPE, _turn(2))
    stores.events.delete_event(SCOPE, "s1", added.event_id)
    assert generations.generation(SCOPE) != before


def test_counted_keyed_and_batched_appends_move_it(stores: Stores) -> None:
    generations = _generations(stores)
    assert stores.rollouts is not None
    policy = TriggerPolicy(message_count=3, strategy_ids=("facts",))
    rollouts = stores.rollouts
    assert _moves(
        generations,
        lambda: rollouts.append_counted(SCOPE, _turn(0), policy=policy, idempotency_key="k-1"),
    )
    assert _moves(generations, lambda: stores.events.append(SCOPE, _turn(1), idempotency_key="k-2"))
    batch = [_turn(2), _turn(3)]
    assert _moves(generations, lambda: rollouts.append_counted_batch(SCOPE, batch, policy=policy))


def test_chunks_written_and_deleted_and_erasures_move_it(stores: Stores) -> None:
    generations = _generations(stores)
    assert stores.chunks is not None
    chunks = stores.chunks
    for i in range(10):
        stores.events.append(SCOPE, _turn(i))
    turns = turns_after(stores.events, SCOPE, "s1", None)
    chunk = level_one_chunk(SCOPE, turns, "topics: turns", T0)
    assert _moves(generations, lambda: chunks.put(SCOPE, chunk))
    assert _moves(generations, lambda: chunks.forget_turn(SCOPE, "s1", turns[0].event_id))
    chunks.put(
        SCOPE, level_one_chunk(SCOPE, turns_after(stores.events, SCOPE, "s1", None), "t", T0)
    )
    assert _moves(generations, lambda: erase_session(stores, SCOPE, "s1"))
    stores.events.append(SCOPE, _turn(20, "s2"))
    assert _moves(generations, lambda: stores.events.erase_scope(SCOPE))


def test_reads_and_another_scopes_writes_leave_it_unchanged(stores: Stores) -> None:
    generations = _generations(stores)
    event = stores.events.append(SCOPE, _turn(0))
    other = OTHER_ACTOR
    assert not _moves(generations, lambda: stores.events.get_event(SCOPE, "s1", event.event_id))
    assert not _moves(generations, lambda: stores.events.list_events(SCOPE, "s1"))
    assert not _moves(generations, lambda: stores.events.append(other, _turn(1)))
    assert generations.generation(SCOPE) == generations.generation(SCOPE)
