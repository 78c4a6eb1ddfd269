"""The rollup job on the real SQLite store: the pyramid's invariants, through the model port."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.chunks import Chunk
from cairn.clock import FixedClock
from cairn.errors import ModelUnavailableError
from cairn.history import roll_up_scope, roll_up_session
from cairn.history.prompts import ROLLUP_SCHEMA_NAME, RollupDocument
from cairn.history.pyramid import chunk_batches, turn_batches
from cairn.history.turns import turns_after
from cairn.local import offline_model
from cairn.model_request import ModelRequest
from cairn.models import Branch, Conversational, EventInput, Role, Scope, Trust
from cairn.ports import ChunkStore, Stores
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import ScriptedModel

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def stores(tmp_path: Path, clock: FixedClock) -> Iterator[Stores]:
    opened = SQLiteBackend(tmp_path / "cairn.db", clock).stores()
    yield opened
    opened.close()


def chunks_of(stores: Stores) -> ChunkStore:
    assert stores.chunks is not None
    return stores.chunks


def say(stores: Stores, count: int, *, start: int = 0, role: Role | None = None) -> None:
    """Append ``count`` turns, alternating user and assistant unless ``role`` is given."""
    for i in range(start, start + count):
        speaker = role or (Role.USER if i % 2 == 0 else Role.ASSISTANT)
        stores.events.append(
            SCOPE,
            EventInput(
                session_id="s1",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=speaker, text=f"turn {i} about hive number {i}."),),
            ),
        )


def summary_of(request: ModelRequest) -> str:
    document = RollupDocument.model_validate_json(request.messages[0].text)
    first, last = document.passages[0].n, document.passages[-1].n
    return json.dumps({"points": [{"text": f"L{document.level} span {first}-{last}"}]})


def echoing(calls: int) -> ScriptedModel:
    return ScriptedModel([summary_of] * calls)


def test_complete_batches_of_ten_become_level_one_chunks_and_the_rest_waits(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 25)
    model = echoing(2)

    report = roll_up_session(stores.events, chunks_of(stores), model, SCOPE, "s1", clock=clock)

    chunks = chunks_of(stores).list_chunks(SCOPE, "s1")
    assert report.written == {1: 2}
    assert report.skipped is None
    assert [(c.from_seq, c.to_seq, c.units) for c in chunks] == [(1, 10, 10), (11, 20, 10)]
    assert model.remaining == 0
    waiting = turns_after(stores.events, SCOPE, "s1", chunks[-1])
    assert [t.seq for t in waiting] == [21, 22, 23, 24, 25]


def test_every_pointer_of_a_level_one_chunk_resolves_to_its_turns(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 10)
    roll_up_session(stores.events, chunks_of(stores), echoing(1), SCOPE, "s1", clock=clock)

    (chunk,) = chunks_of(stores).list_chunks(SCOPE, "s1")
    turns = [stores.events.get_event(SCOPE, "s1", event_id) for event_id in chunk.children]

    assert [t.event_timestamp for t in turns] == [T0 + timedelta(minutes=i) for i in range(10)]
    assert (chunk.period_start, chunk.period_end) == (T0, T0 + timedelta(minutes=9))


def test_level_two_is_written_from_the_level_one_summaries_only(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 100)
    model = echoing(11)

    report = roll_up_session(stores.events, chunks_of(stores), model, SCOPE, "s1", clock=clock)

    assert report.written == {1: 10, 2: 1}
    (top,) = chunks_of(stores).list_chunks(SCOPE, "s1", level=2)
    level_one = chunks_of(stores).list_chunks(SCOPE, "s1", level=1)
    assert top.children == tuple(c.chunk_id for c in level_one)
    assert (top.from_seq, top.to_seq, top.units) == (1, 100, 100)
    asked = RollupDocument.model_validate_json(model.requests[-1].messages[0].text)
    assert [p.text for p in asked.passages] == [c.summary for c in level_one]
    assert "hive number" not in model.requests[-1].messages[0].text
    assert top.summary == "L2 span 1-10"


def test_a_summary_of_untrusted_turns_is_untrusted_at_every_level(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 10, role=Role.USER)
    say(stores, 90, start=10)
    roll_up_session(stores.events, chunks_of(stores), echoing(11), SCOPE, "s1", clock=clock)

    chunks = chunks_of(stores).list_chunks(SCOPE, "s1")

    assert chunks[0].trust is Trust.TRUSTED
    assert {c.trust for c in chunks[1:]} == {Trust.UNTRUSTED}
    assert chunks[-1].level == 2
    assert chunks[-1].trust is Trust.UNTRUSTED


def test_a_pass_that_fails_midway_keeps_what_it_wrote_and_the_next_pass_continues(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 40)
    failing = ScriptedModel([summary_of, summary_of, ModelUnavailableError("throttled")])

    first = roll_up_session(stores.events, chunks_of(stores), failing, SCOPE, "s1", clock=clock)
    second = roll_up_session(stores.events, chunks_of(stores), echoing(2), SCOPE, "s1", clock=clock)
    third = roll_up_session(stores.events, chunks_of(stores), echoing(0), SCOPE, "s1", clock=clock)

    assert first.written == {1: 2}
    assert first.skipped is not None
    assert "retries" in first.skipped
    assert second.written == {1: 2}
    assert second.skipped is None
    assert third.chunks == 0  # nothing is ever summarised twice
    spans = [(c.from_seq, c.to_seq) for c in chunks_of(stores).list_chunks(SCOPE, "s1")]
    assert spans == [(1, 10), (11, 20), (21, 30), (31, 40)]


def test_a_refused_answer_stores_nothing_and_says_why_without_content(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 10)
    model = ScriptedModel(['{"points": []}', "not json"])

    report = roll_up_session(stores.events, chunks_of(stores), model, SCOPE, "s1", clock=clock)

    assert report.chunks == 0
    assert report.skipped is not None
    assert "refused" in report.skipped
    assert "hive" not in report.skipped
    assert chunks_of(stores).list_chunks(SCOPE, "s1") == ()


def test_branch_events_and_blob_only_events_are_not_turns(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 9)
    stores.events.append(
        SCOPE,
        EventInput(
            session_id="s1",
            event_timestamp=T0 + timedelta(minutes=30),
            payload=(Conversational(role=Role.USER, text="on a branch"),),
            branch=Branch(name="retry-1"),
        ),
    )

    assert (
        roll_up_session(
            stores.events, chunks_of(stores), echoing(0), SCOPE, "s1", clock=clock
        ).written
        == {}
    )
    say(stores, 1, start=9)
    assert roll_up_session(
        stores.events, chunks_of(stores), echoing(1), SCOPE, "s1", clock=clock
    ).written == {1: 1}


def test_roll_up_scope_covers_every_session_of_the_actor(stores: Stores, clock: FixedClock) -> None:
    say(stores, 10)
    for i in range(10):
        stores.events.append(
            SCOPE,
            EventInput(
                session_id="s2",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=f"other {i}"),),
            ),
        )

    reports = roll_up_scope(stores.events, chunks_of(stores), echoing(2), SCOPE, clock=clock)

    assert [(r.session_id, r.chunks) for r in reports] == [("s1", 1), ("s2", 1)]


def test_the_planner_plans_only_complete_uncovered_batches() -> None:
    assert turn_batches(list(range(25)), 10) == [list(range(10)), list(range(10, 20))]  # type: ignore[arg-type]
    level: list[Chunk] = []
    assert chunk_batches(level, [], 10) == []


def test_the_offline_summary_names_the_topics_and_quotes_what_was_said(
    stores: Stores, clock: FixedClock
) -> None:
    lines = [
        "We should plan the garden for spring.",
        "The garden needs tomatoes and basil this spring.",
        "I bought a new bike yesterday.",
        "Basil grows well next to tomatoes in the garden.",
        "My sister calls on Sundays.",
        "Let us put the tomatoes by the south fence.",
        "The weather is grey.",
        "Spring planting starts in April for the garden.",
        "I like jazz.",
        "So: tomatoes, basil, south fence, April.",
    ]
    for i, text in enumerate(lines):
        stores.events.append(
            SCOPE,
            EventInput(
                session_id="s1",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=text),),
            ),
        )
    model = offline_model()
    assert ROLLUP_SCHEMA_NAME in model.schemas

    roll_up_session(stores.events, chunks_of(stores), model, SCOPE, "s1", clock=clock)

    (chunk,) = chunks_of(stores).list_chunks(SCOPE, "s1")
    assert chunk.summary.startswith("Topics: garden, tomatoes")
    assert "user: " in chunk.summary
    assert "jazz" not in chunk.summary
    assert "bike" not in chunk.summary
    assert len(chunk.summary) < sum(len(line) for line in lines)


def test_after_a_turn_is_deleted_the_rollup_summarises_what_remains_without_it(
    stores: Stores, clock: FixedClock
) -> None:
    say(stores, 30)
    roll_up_session(stores.events, chunks_of(stores), echoing(3), SCOPE, "s1", clock=clock)
    deleted = stores.events.list_events(SCOPE, "s1").items[14].event_id

    stores.events.delete_event(SCOPE, "s1", deleted)
    report = roll_up_session(stores.events, chunks_of(stores), echoing(1), SCOPE, "s1", clock=clock)

    chunks = chunks_of(stores).list_chunks(SCOPE, "s1")
    assert report.written == {1: 1}
    assert [(c.from_seq, c.to_seq) for c in chunks] == [(1, 10), (11, 20)]
    assert deleted not in chunks[1].children
    assert len(turns_after(stores.events, SCOPE, "s1", chunks[-1])) == 9
