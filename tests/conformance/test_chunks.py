"""The history pyramid's store: contiguous, non-overlapping levels, pointers that resolve,
retries that never double, scope isolation, and erasure of a session and of an actor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.chunks import Chunk, chunk_id
from cairn.clock import FixedClock
from cairn.erasure import erase_actor, erase_session
from cairn.errors import ChunkConflictError, ChunkNotFoundError, InvalidInputError
from cairn.models import Scope, Source, SourceKind, Trust, derive_trust
from cairn.ports import ChunkStore, Stores
from tests.conformance.backends import open_backend
from tests.conformance.samples import OTHER_ACTOR, SCOPE, event_input

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
USER_TURNS = Source(kind=SourceKind.USER, session_id="s1")
MODEL_TURNS = Source(kind=SourceKind.MODEL, session_id="s1")


def level_one(
    from_seq: int,
    *,
    size: int = 10,
    scope: Scope = SCOPE,
    session: str = "s1",
    summary: str | None = None,
    sources: tuple[Source, ...] = (USER_TURNS, MODEL_TURNS),
) -> Chunk:
    to_seq = from_seq + size - 1
    return Chunk(
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        session_id=session,
        chunk_id=chunk_id(1, from_seq, to_seq),
        level=1,
        from_seq=from_seq,
        to_seq=to_seq,
        period_start=T0 + timedelta(minutes=from_seq),
        period_end=T0 + timedelta(minutes=to_seq),
        units=size,
        children=tuple(f"e{seq}" for seq in range(from_seq, to_seq + 1)),
        summary=summary or f"turns {from_seq} to {to_seq} talked about bees",
        sources=sources,
        trust=derive_trust(sources),
        created_at=T0,
    )


def level_up(children: list[Chunk], *, summary: str = "a month of beekeeping") -> Chunk:
    first, last = children[0], children[-1]
    sources = tuple(dict.fromkeys(s for c in children for s in c.sources))
    return Chunk(
        memory_id=first.memory_id,
        actor_id=first.actor_id,
        session_id=first.session_id,
        chunk_id=chunk_id(first.level + 1, first.from_seq, last.to_seq),
        level=first.level + 1,
        from_seq=first.from_seq,
        to_seq=last.to_seq,
        period_start=first.period_start,
        period_end=last.period_end,
        units=last.to_seq - first.from_seq + 1,
        children=tuple(c.chunk_id for c in children),
        summary=summary,
        sources=sources,
        trust=derive_trust(sources),
        created_at=T0,
    )


def chunks_of(stores: Stores) -> ChunkStore:
    assert stores.chunks is not None, "every backend keeps the history pyramid"
    return stores.chunks


def fill_level_one(store: ChunkStore, count: int, **kwargs: object) -> list[Chunk]:
    return [store.put(SCOPE, level_one(1 + 10 * i, **kwargs)) for i in range(count)]  # type: ignore[arg-type]


def test_level_one_chunks_round_trip_and_list_in_order(stores: Stores) -> None:
    store = chunks_of(stores)
    written = fill_level_one(store, 3)

    assert store.list_chunks(SCOPE, "s1") == tuple(written)
    assert store.list_chunks(SCOPE, "s1", level=1) == tuple(written)
    assert store.list_chunks(SCOPE, "s1", level=2) == ()
    assert store.get_chunk(SCOPE, "s1", written[1].chunk_id) == written[1]
    assert store.chunk_sessions(SCOPE) == ("s1",)


def test_a_chunk_that_leaves_a_gap_is_refused_and_nothing_is_stored(stores: Stores) -> None:
    store = chunks_of(stores)

    with pytest.raises(ChunkConflictError, match="continues at turn 1"):
        store.put(SCOPE, level_one(11))
    assert store.list_chunks(SCOPE, "s1") == ()
    assert store.chunk_sessions(SCOPE) == ()


def test_a_chunk_that_overlaps_its_level_is_refused(stores: Stores) -> None:
    store = chunks_of(stores)
    first = store.put(SCOPE, level_one(1))

    with pytest.raises(ChunkConflictError, match="continues at turn 11"):
        store.put(SCOPE, level_one(5))
    with pytest.raises(ChunkConflictError):
        store.put(SCOPE, level_one(1, size=5))
    assert store.list_chunks(SCOPE, "s1") == (first,)


def test_putting_the_same_chunk_again_stores_it_once(stores: Stores, clock: FixedClock) -> None:
    store = chunks_of(stores)
    first = store.put(SCOPE, level_one(1))

    again = store.put(SCOPE, level_one(1).model_copy(update={"created_at": T0 + timedelta(1)}))

    assert again == first
    assert store.list_chunks(SCOPE, "s1") == (first,)


def test_another_summary_under_a_stored_id_is_refused(stores: Stores) -> None:
    store = chunks_of(stores)
    first = store.put(SCOPE, level_one(1))

    with pytest.raises(ChunkConflictError, match="another chunk is stored under its id"):
        store.put(SCOPE, level_one(1, summary="a different story"))
    assert store.get_chunk(SCOPE, "s1", first.chunk_id) == first


def test_a_level_two_chunk_needs_exactly_its_level_one_children(stores: Stores) -> None:
    store = chunks_of(stores)
    children = fill_level_one(store, 9)
    ten = level_one(91)

    with pytest.raises(ChunkConflictError, match="is not stored"):
        store.put(SCOPE, level_up([*children, ten]))
    store.put(SCOPE, ten)
    with pytest.raises(ChunkConflictError, match="not the contiguous level below"):
        store.put(SCOPE, level_up([children[0], children[2], children[1], *children[3:], ten]))
    parent = store.put(SCOPE, level_up([*children, ten]))

    assert store.list_chunks(SCOPE, "s1", level=2) == (parent,)
    assert (parent.from_seq, parent.to_seq, parent.units) == (1, 100, 100)
    drilled = [store.get_chunk(SCOPE, "s1", child) for child in parent.children]
    assert drilled == [*children, ten]
    assert [c.level for c in store.list_chunks(SCOPE, "s1")] == [1] * 10 + [2]


def test_a_summary_of_untrusted_turns_stays_untrusted_in_every_backend(stores: Stores) -> None:
    store = chunks_of(stores)
    trusted = store.put(SCOPE, level_one(1, sources=(USER_TURNS,)))
    untrusted = store.put(SCOPE, level_one(11, sources=(USER_TURNS, MODEL_TURNS)))

    listed = store.list_chunks(SCOPE, "s1")

    assert [c.trust for c in listed] == [Trust.TRUSTED, Trust.UNTRUSTED]
    assert listed == (trusted, untrusted)


def test_chunks_are_pinned_to_their_scope(stores: Stores) -> None:
    store = chunks_of(stores)
    mine = store.put(SCOPE, level_one(1))

    with pytest.raises(ChunkNotFoundError):
        store.get_chunk(OTHER_ACTOR, "s1", mine.chunk_id)
    assert store.list_chunks(OTHER_ACTOR, "s1") == ()
    with pytest.raises(InvalidInputError, match="store it in its own scope"):
        store.put(OTHER_ACTOR, level_one(11))
    with pytest.raises(ChunkNotFoundError):
        store.get_chunk(SCOPE, "s2", mine.chunk_id)
    # Another actor's level starts at turn 1 on its own.
    theirs = store.put(OTHER_ACTOR, level_one(1, scope=OTHER_ACTOR))
    assert store.list_chunks(OTHER_ACTOR, "s1") == (theirs,)


def test_erasing_a_session_deletes_its_chunks_and_events_only(stores: Stores) -> None:
    store = chunks_of(stores)
    for session in ("s1", "s2"):
        stores.events.append(SCOPE, event_input(session))
        store.put(SCOPE, level_one(1, session=session))
    store.put(SCOPE, level_one(11))

    erased = erase_session(stores, SCOPE, "s1")

    assert (erased.events, erased.chunks) == (1, 2)
    assert store.list_chunks(SCOPE, "s1") == ()
    assert stores.events.list_events(SCOPE, "s1").items == ()
    assert store.chunk_sessions(SCOPE) == ("s2",)
    assert len(store.list_chunks(SCOPE, "s2")) == 1
    # The pyramid of an erased session starts again at turn 1.
    store.put(SCOPE, level_one(1))


def test_erasing_an_actor_reaches_every_chunk_of_every_session(stores: Stores) -> None:
    store = chunks_of(stores)
    for session in ("s1", "s2"):
        store.put(SCOPE, level_one(1, session=session))
    kept = store.put(OTHER_ACTOR, level_one(1, scope=OTHER_ACTOR))

    erased = erase_actor(stores, SCOPE, staging=None)

    assert erased.chunks == 2
    assert store.chunk_sessions(SCOPE) == ()
    assert store.list_chunks(SCOPE, "s2") == ()
    assert store.list_chunks(OTHER_ACTOR, "s1") == (kept,)
    assert store.erase_scope(SCOPE) == 0  # idempotent


def test_chunks_survive_reopen(persistent_backend: str, clock: FixedClock, tmp_path: Path) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        written = fill_level_one(chunks_of(first), 2)
    finally:
        first.close()
    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert chunks_of(again).list_chunks(SCOPE, "s1") == tuple(written)
        with pytest.raises(ChunkConflictError):
            chunks_of(again).put(SCOPE, level_one(1, summary="rewritten after reopen"))
    finally:
        again.close()


def test_deleting_a_turn_deletes_every_summary_of_it_and_keeps_levels_contiguous(
    stores: Stores,
) -> None:
    store = chunks_of(stores)
    events = [
        stores.events.append(SCOPE, event_input(at=T0 + timedelta(minutes=i), text=f"turn {i}"))
        for i in range(100)
    ]
    level = []
    for start in range(0, 100, 10):
        batch = events[start : start + 10]
        chunk = level_one(start + 1).model_copy(
            update={"children": tuple(e.event_id for e in batch)}
        )
        level.append(store.put(SCOPE, chunk))
    store.put(SCOPE, level_up(level))

    stores.events.delete_event(SCOPE, "s1", events[34].event_id)

    assert [(c.level, c.from_seq) for c in store.list_chunks(SCOPE, "s1")] == [
        (1, 1),
        (1, 11),
        (1, 21),
    ]
    again = level_one(31).model_copy(update={"children": tuple(e.event_id for e in events[35:45])})
    assert store.put(SCOPE, again) == again, "the level continues at the cut"
    assert store.forget_turn(SCOPE, "s1", events[0].event_id) == 4
    assert store.put(SCOPE, level_one(1)).from_seq == 1, "and at turn 1 after a cut there"
    assert store.forget_turn(SCOPE, "s1", "no-such-event") == 0
