"""Query signals: a named person or a named period lifts what is already relevant, nothing else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.recall import RecallPolicy
from cairn.recall.candidates import Candidate
from cairn.recall.relevance import Relevant
from cairn.recall.signals import boost, names_an_entity, record_date
from cairn.versioning import plan_writes

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")
ON = RecallPolicy(entity_weight=0.3, temporal_weight=0.2, temporal_lag_days=7)


def version(
    index: int,
    *,
    entities: tuple[str, ...] = (),
    seen: datetime = NOW,
    valid_from: datetime | None = None,
) -> RecordVersion:
    record = NewRecord(
        record_id=f"mem-{index:036d}",
        namespace="/facts/a1/",
        content=f"fact number {index}",
        entities=entities,
        sources=(Source(kind=SourceKind.USER),),
        seen_at=seen,
        valid_from=valid_from,
    )
    return plan_writes(SCOPE, [Create(record=record)], {}, seen)[0].version


def item(v: RecordVersion, relevance: float) -> Relevant:
    return Relevant(candidate=Candidate(version=v, tokens=(), keyword=0.0), relevance=relevance)


def relevances(items: tuple[Relevant, ...]) -> list[float]:
    return [r.relevance for r in items]


def test_a_record_naming_the_person_the_query_names_is_lifted() -> None:
    caroline = item(version(1, entities=("Caroline",)), 0.5)
    melanie = item(version(2, entities=("Melanie",)), 0.5)
    boosted = boost([caroline, melanie], "What kind of art does Caroline make?", NOW, ON)
    assert relevances(boosted) == pytest.approx([0.65, 0.5])


def test_a_possessive_still_names_the_person_and_a_two_word_name_needs_both_words() -> None:
    v = version(1, entities=("New York",))
    assert names_an_entity(version(2, entities=("Caroline",)), frozenset({"carolin", "art"}))
    assert not names_an_entity(v, frozenset({"york"}))
    (boosted,) = boost([item(v, 0.4)], "Caroline's trip to New York", NOW, ON)
    assert boosted.relevance == pytest.approx(0.52)


def test_a_record_dated_in_the_period_the_query_names_is_lifted_even_if_told_days_later() -> None:
    in_may = item(version(1, seen=datetime(2023, 5, 20, tzinfo=UTC)), 0.5)
    told_after = item(version(2, seen=datetime(2023, 6, 5, tzinfo=UTC)), 0.5)
    in_july = item(version(3, seen=datetime(2023, 7, 20, tzinfo=UTC)), 0.5)
    boosted = boost([in_may, told_after, in_july], "What did I paint in May 2023?", NOW, ON)
    assert relevances(boosted) == pytest.approx([0.6, 0.6, 0.5])


def test_a_known_start_date_counts_over_when_the_fact_was_first_said() -> None:
    v = version(
        1, seen=datetime(2024, 1, 10, tzinfo=UTC), valid_from=datetime(2021, 3, 1, tzinfo=UTC)
    )
    assert record_date(v) == datetime(2021, 3, 1, tzinfo=UTC)
    (boosted,) = boost([item(v, 0.5)], "Where did I move in 2021?", NOW, ON)
    assert boosted.relevance == pytest.approx(0.6)


def test_with_every_weight_at_zero_nothing_changes() -> None:
    items = [item(version(1, entities=("Caroline",), seen=NOW - timedelta(days=3)), 0.5)]
    off = RecallPolicy(entity_weight=0.0, temporal_weight=0.0)
    assert boost(items, "what did Caroline do yesterday", NOW, off) == tuple(items)


@given(
    relevance=st.floats(0.0, 1.0),
    entity_weight=st.floats(0.0, 1.0),
    temporal_weight=st.floats(0.0, 1.0),
    named=st.booleans(),
    in_period=st.booleans(),
)
def test_a_boost_never_lowers_never_exceeds_one_and_never_rescues_zero(
    relevance: float, entity_weight: float, temporal_weight: float, named: bool, in_period: bool
) -> None:
    policy = RecallPolicy(entity_weight=entity_weight, temporal_weight=temporal_weight)
    seen = datetime(2023, 5, 2, tzinfo=UTC) if in_period else datetime(2020, 1, 1, tzinfo=UTC)
    v = version(1, entities=("Caroline",) if named else (), seen=seen)
    (boosted,) = boost([item(v, relevance)], "Caroline in May 2023", NOW, policy)
    assert relevance <= boosted.relevance <= 1.0
    if relevance == 0.0:
        assert boosted.relevance == 0.0
