"""Recall by period, by typed link and by drill-down, on every backend (``cairn.history.axes``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cairn.changes import Create, NewRecord, Retract
from cairn.chunks import chunk_id
from cairn.errors import ChunkNotFoundError, InvalidInputError, RecordNotFoundError
from cairn.history.axes import about_time, by_period, children, enclosing, neighbors
from cairn.history.pyramid import level_one_chunk, parent_chunk
from cairn.history.turns import turns_after
from cairn.models import (
    Conversational,
    Edge,
    EdgeKind,
    EventInput,
    RecordVersion,
    Role,
    Scope,
    Trust,
)
from cairn.ports import ChunkStore, Stores
from cairn.recall.index.heads import heads_of
from tests.conformance.samples import FACTS, OTHER_ACTOR, SCOPE, USER

MARCH = datetime(2026, 3, 1, tzinfo=UTC)
APRIL = datetime(2026, 4, 1, tzinfo=UTC)
T0 = datetime(2026, 2, 20, 9, 0, tzinfo=UTC)


def chunks_of(stores: Stores) -> ChunkStore:
    assert stores.chunks is not None
    return stores.chunks


def remember(
    stores: Stores,
    content: str,
    *,
    valid_from: datetime | None = None,
    edges: tuple[Edge, ...] = (),
    scope: Scope = SCOPE,
) -> RecordVersion:
    record = NewRecord(
        namespace=FACTS if scope == SCOPE else f"/facts/{scope.actor_id}/",
        content=content,
        sources=(USER,),
        valid_from=valid_from,
        edges=edges,
    )
    (written,) = stores.records.apply(scope, [Create(record=record)])
    return written


def talk(stores: Stores, session: str, start: datetime, count: int, *, every: timedelta) -> None:
    for i in range(count):
        role = Role.USER if i % 2 == 0 else Role.ASSISTANT
        stores.events.append(
            SCOPE,
            EventInput(
                session_id=session,
                event_timestamp=start + i * every,
                payload=(Conversational(role=role, text=f"{session} turn {i}"),),
            ),
        )


def roll(stores: Stores, session: str, count: int) -> None:
    """Level-1 chunks of ten over the session's first ``count`` turns, and a level 2 if whole."""
    turns = turns_after(stores.events, SCOPE, session, None)
    level = [
        chunks_of(stores).put(
            SCOPE, level_one_chunk(SCOPE, turns[i : i + 10], f"{session} part {i}", T0)
        )
        for i in range(0, count, 10)
    ]
    if len(level) == 10:
        chunks_of(stores).put(SCOPE, parent_chunk(level, f"{session} in short", T0))


def test_by_period_merges_records_turns_and_chunks_in_time_order(stores: Stores) -> None:
    in_march = remember(stores, "Started beekeeping", valid_from=MARCH + timedelta(days=3))
    remember(stores, "Moved to Oslo", valid_from=APRIL + timedelta(days=3))
    talk(stores, "s1", MARCH - timedelta(days=5), 20, every=timedelta(days=1))
    roll(stores, "s1", 20)

    hits = by_period(
        stores.records,
        stores.events,
        stores.chunks,
        SCOPE,
        MARCH,
        APRIL - timedelta(microseconds=1),
    )

    assert [h.at for h in hits] == sorted(h.at for h in hits)
    assert [h.ref for h in hits if h.kind == "records"] == [in_march.record_id]
    turns = [h for h in hits if h.kind == "turns"]
    assert [h.text.split(": ", 1)[1] for h in turns] == [f"s1 turn {i}" for i in range(5, 20)]
    assert [h.ref for h in hits if h.kind == "chunks"] == [chunk_id(1, 1, 10), chunk_id(1, 11, 20)]
    assert {h.trust for h in turns} == {Trust.TRUSTED, Trust.UNTRUSTED}


def test_by_period_selects_kinds_and_stays_in_its_scope(stores: Stores) -> None:
    remember(stores, "Started beekeeping", valid_from=MARCH + timedelta(days=3))
    remember(stores, "Theirs", valid_from=MARCH + timedelta(days=3), scope=OTHER_ACTOR)
    talk(stores, "s1", MARCH, 3, every=timedelta(hours=1))

    only_records = by_period(
        stores.records,
        stores.events,
        stores.chunks,
        SCOPE,
        MARCH,
        APRIL,
        kinds=frozenset({"records"}),
    )
    other = by_period(stores.records, stores.events, stores.chunks, OTHER_ACTOR, MARCH, APRIL)

    assert [h.text for h in only_records] == ["Started beekeeping"]
    assert [h.text for h in other] == ["Theirs"]


@pytest.mark.parametrize(
    ("start", "end", "limit", "message"),
    [
        (APRIL, MARCH, 10, "end precedes its start"),
        (MARCH.replace(tzinfo=None), APRIL, 10, "timezone-aware"),
        (MARCH, APRIL, 0, "limit must be between"),
    ],
)
def test_by_period_refuses_a_bad_period(
    stores: Stores, start: datetime, end: datetime, limit: int, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        by_period(stores.records, stores.events, stores.chunks, SCOPE, start, end, limit=limit)


def test_neighbors_walk_typed_links_out_of_and_into_a_record(stores: Stores) -> None:
    hive = remember(stores, "The hive is by the north fence")
    gone = remember(stores, "The old hive was by the shed")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
    decision = remember(
        stores,
        "Decided to move the hive",
        edges=(
            Edge(kind=EdgeKind.RELATES_TO, target=hive.record_id),
            Edge(kind=EdgeKind.DECIDED_IN, target="s1"),
            Edge(kind=EdgeKind.CAUSED_BY, target=gone.record_id),
            Edge(kind=EdgeKind.CONTRADICTS, target=hive.record_id),
        ),
    )

    out = neighbors(stores.records, SCOPE, decision.record_id)
    into = neighbors(stores.records, SCOPE, hive.record_id)
    only = neighbors(
        stores.records, SCOPE, decision.record_id, kinds=frozenset({EdgeKind.CAUSED_BY})
    )

    assert [(n.kind, n.direction, n.target) for n in out] == [
        (EdgeKind.RELATES_TO, "out", hive.record_id),
        (EdgeKind.DECIDED_IN, "out", "s1"),
        (EdgeKind.CAUSED_BY, "out", gone.record_id),
    ]
    assert out[0].record is not None
    assert out[0].record.content == "The hive is by the north fence"
    assert out[1].record is None  # a session, not a record
    assert out[2].record is None  # retracted: never recalled
    assert [(n.kind, n.direction, n.target) for n in into] == [
        (EdgeKind.RELATES_TO, "in", decision.record_id)
    ]
    assert [n.kind for n in only] == [EdgeKind.CAUSED_BY]


def test_neighbors_refuse_another_scope_and_an_invented_kind(stores: Stores) -> None:
    hive = remember(stores, "The hive is by the north fence")

    with pytest.raises(RecordNotFoundError):
        neighbors(stores.records, OTHER_ACTOR, hive.record_id)
    with pytest.raises(InvalidInputError, match="not a link recall walks"):
        neighbors(stores.records, SCOPE, hive.record_id, kinds=frozenset({EdgeKind.CONTRADICTS}))


def test_drill_down_from_the_top_reaches_every_turn(stores: Stores) -> None:
    talk(stores, "s1", T0, 100, every=timedelta(minutes=1))
    roll(stores, "s1", 100)
    (top,) = chunks_of(stores).list_chunks(SCOPE, "s1", level=2)

    parts = children(stores.events, chunks_of(stores), SCOPE, "s1", top.chunk_id)
    turns = [
        event
        for part in parts
        for event in children(stores.events, chunks_of(stores), SCOPE, "s1", part.chunk_id)  # type: ignore[union-attr]
    ]

    assert len(parts) == 10
    assert [e.payload[0].text for e in turns] == [f"s1 turn {i}" for i in range(100)]  # type: ignore[union-attr]
    covering = enclosing(chunks_of(stores), SCOPE, "s1", turns[42].event_id)  # type: ignore[union-attr]
    assert [(c.level, c.from_seq, c.to_seq) for c in covering] == [(1, 41, 50), (2, 1, 100)]
    with pytest.raises(ChunkNotFoundError):
        children(stores.events, chunks_of(stores), OTHER_ACTOR, "s1", top.chunk_id)


def test_a_question_that_names_a_time_reads_that_period_of_the_conversation(
    stores: Stores,
) -> None:
    may = datetime(2023, 5, 1, tzinfo=UTC)
    in_may = remember(stores, "Adopted a dog", valid_from=may + timedelta(days=9))
    remember(stores, "Started a pottery class", valid_from=datetime(2023, 7, 2, tzinfo=UTC))
    talk(stores, "s1", may + timedelta(days=27), 10, every=timedelta(days=1))  # 28 May-6 June
    roll(stores, "s1", 10)

    named = about_time(
        stores.records, stores.events, stores.chunks, SCOPE, "What did I do in May 2023?"
    )
    relative = about_time(
        stores.records, stores.events, stores.chunks, SCOPE, "what happened last May?"
    )
    none = about_time(stores.records, stores.events, stores.chunks, SCOPE, "what do I like?")

    assert [h.ref for h in named if h.kind == "records"] == [in_may.record_id]
    assert [h.text.split(": ", 1)[1] for h in named if h.kind == "turns"] == [
        "s1 turn 0",
        "s1 turn 1",
        "s1 turn 2",
        "s1 turn 3",
    ]  # 28 to 31 May
    assert [h.ref for h in named if h.kind == "chunks"] == [chunk_id(1, 1, 10)]
    # "last May" is the conversation's (its latest turn is in June 2023), not the wall clock's.
    assert relative == named
    assert none == ()


def test_the_head_index_answers_as_the_scan_does_and_follows_every_write(
    stores: Stores,
) -> None:
    heads = heads_of(stores)
    hive = remember(stores, "The hive is by the north fence", valid_from=MARCH)
    moved = remember(
        stores,
        "Moved the hive",
        valid_from=MARCH + timedelta(days=2),
        edges=(Edge(kind=EdgeKind.RELATES_TO, target=hive.record_id),),
    )
    remember(stores, "Bought a smoker", valid_from=APRIL)

    def both() -> tuple[list[str], list[str], list[str], list[str]]:
        period = (stores.records, stores.events, stores.chunks, SCOPE, MARCH, APRIL)
        return (
            [h.ref for h in by_period(*period, heads=heads)],
            [h.ref for h in by_period(*period)],
            [n.target for n in neighbors(stores.records, SCOPE, hive.record_id, heads=heads)],
            [n.target for n in neighbors(stores.records, SCOPE, hive.record_id)],
        )

    indexed, scanned, linked, walked = both()
    assert indexed == scanned
    assert len(indexed) == 3
    assert linked == walked == [moved.record_id]

    stores.records.apply(SCOPE, [Retract(record_id=moved.record_id)])
    late = remember(
        stores,
        "Painted the hive",
        valid_from=MARCH + timedelta(days=9),
        edges=(Edge(kind=EdgeKind.PART_OF, target=hive.record_id),),
    )
    indexed, scanned, linked, walked = both()
    assert indexed == scanned
    assert moved.record_id not in indexed
    assert late.record_id in indexed
    assert linked == walked == [late.record_id]
