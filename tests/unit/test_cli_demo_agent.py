"""The demo's offline agent: it files explicit first-person statements, and nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn.changes import Create, FoldIn
from cairn.demo.conversation_script import (
    CONVERSATION,
    DEMO_SCOPE,
    plan_filing,
    read_event,
    statements_in,
)
from cairn.models import (
    Conversational,
    Event,
    Role,
    SourceKind,
    Status,
    Trust,
)
from cairn.store.memory import InMemoryBackend


def _event(text: str, role: Role = Role.USER, session: str = "s1") -> Event:
    return Event(
        memory_id=DEMO_SCOPE.memory_id,
        actor_id=DEMO_SCOPE.actor_id,
        session_id=session,
        event_id="1767225600000#abc",
        event_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        payload=(Conversational(role=role, text=text),),
    )


@pytest.mark.parametrize(
    ("said", "category", "filed"),
    [
        ("I prefer tea over coffee.", "preference", "The user prefers tea over coffee."),
        (
            "I decided to move the launch to May because my team needs time.",
            "decision",
            "The user decided to move the launch to May because their team needs time.",
        ),
        ("My office is in Lisbon.", "fact", "The user's office is in Lisbon."),
        ("Remember that I'm allergic to peanuts!", "fact", "The user is allergic to peanuts."),
        (
            "remember that my sister visits in June",
            "fact",
            "The user's sister visits in June.",
        ),
    ],
)
def test_an_explicit_first_person_statement_is_filed_in_the_third_person(
    said: str, category: str, filed: str
) -> None:
    (statement,) = statements_in(said)
    assert statement.category == category
    assert statement.content == filed


@pytest.mark.parametrize(
    "said",
    [
        "Can you check tomorrow's weather?",
        "Do you remember that I prefer tea?",
        "We need to pick a database.",
        "The user prefers tea.",
        "I think I might like jazz.",
    ],
)
def test_questions_and_anything_not_explicitly_stated_are_left_alone(said: str) -> None:
    assert statements_in(said) == []


def test_each_sentence_of_a_message_is_read_on_its_own() -> None:
    found = statements_in("Morning! I prefer window seats. What time is it? My dog is Rex.")
    assert [s.content for s in found] == [
        "The user prefers window seats.",
        "The user's dog is Rex.",
    ]


def test_a_filed_record_is_user_sourced_and_cites_its_event_and_session() -> None:
    (record,) = read_event(_event("I prefer aisle seats.", session="trip-planning"))
    (source,) = record.sources
    assert source.kind is SourceKind.USER
    assert source.event_id == "1767225600000#abc"
    assert source.session_id == "trip-planning"
    assert record.namespace == f"/preferences/{DEMO_SCOPE.actor_id}/"
    assert record.confidence >= 0.9


def test_the_assistant_s_own_words_are_never_filed() -> None:
    assert read_event(_event("I prefer to answer briefly.", role=Role.ASSISTANT)) == []


def test_the_scripted_conversation_states_things_worth_recalling() -> None:
    filed = [
        statement.content
        for session in CONVERSATION
        for turn in session.turns
        if turn.role is Role.USER
        for statement in statements_in(turn.text)
    ]
    assert any(content.startswith("The user is allergic to peanuts") for content in filed)
    assert "The user prefers oat milk flat whites in the morning." in filed
    assert any("Postgres" in content for content in filed)
    assert any("breakfast meeting" in content for content in filed)


def test_filing_the_same_statements_again_confirms_instead_of_duplicating() -> None:
    stores = InMemoryBackend().stores()
    said = _event("I prefer green tea. I prefer green tea. My city is Porto.")
    first = plan_filing(read_event(said), live=[])
    assert [type(change) for change in first] == [Create, Create]
    stores.records.apply(DEMO_SCOPE, first)

    live = stores.records.list_records(DEMO_SCOPE).items
    again = plan_filing(read_event(said), live)
    assert [type(change) for change in again] == [FoldIn, FoldIn]
    written = stores.records.apply(DEMO_SCOPE, again)
    assert [v.seen_count for v in written] == [2, 2]
    assert all(v.status is Status.ACTIVE and v.trust is Trust.TRUSTED for v in written)
    assert len(stores.records.list_records(DEMO_SCOPE).items) == 2
