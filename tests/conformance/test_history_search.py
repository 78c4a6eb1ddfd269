"""Semantic recall over records, turns and chunks together, on every backend
(``cairn.history.search.recall_both``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.erasure import erase_session
from cairn.errors import InvalidInputError
from cairn.history.axes import ALL_KINDS, Kind
from cairn.history.pyramid import level_one_chunk
from cairn.history.search import recall_both
from cairn.history.turns import turns_after
from cairn.models import Conversational, EventInput, Role, Trust
from cairn.ports import Stores
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import RecallQuery
from cairn.testing import HashingEmbedder
from tests.conformance.samples import FACTS, OTHER_ACTOR, SCOPE, USER

EMBEDDER = HashingEmbedder()
MARCH = datetime(2023, 3, 14, 18, 0, tzinfo=UTC)
MAY = datetime(2023, 5, 9, 18, 0, tzinfo=UTC)
# The conversation lives in 2023; the wall clock is years later, so "last March" can only
# mean March 2023 if it is resolved against the conversation's own time.
WALL = datetime(2026, 6, 1, tzinfo=UTC)


def say(stores: Stores, session: str, at: datetime, text: str, role: Role = Role.USER) -> str:
    event = stores.events.append(
        SCOPE,
        EventInput(
            session_id=session,
            event_timestamp=at,
            payload=(Conversational(role=role, text=text),),
        ),
    )
    return event.event_id


def remember(stores: Stores, content: str) -> str:
    record = NewRecord(namespace=FACTS, content=content, sources=(USER,))
    (written,) = stores.records.apply(SCOPE, [Create(record=record)])
    return written.record_id


def ask(
    stores: Stores, text: str, clock: FixedClock, kinds: frozenset[Kind] = ALL_KINDS
) -> list[tuple[str, str]]:
    found = recall_both(
        SCOPE,
        RecallQuery(text=text),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        kinds=kinds,
        index=PassageIndex(),
    )
    return [(hit.kind, hit.ref) for hit in found.hits]


def test_one_ranking_holds_records_turns_and_chunks_and_kinds_select_them(
    stores: Stores, clock: FixedClock
) -> None:
    assert stores.chunks is not None
    record = remember(stores, "The user drinks oolong tea every morning")
    tea_turn = say(stores, "s1", MARCH, "I brewed oolong tea this morning")
    for i in range(1, 10):
        say(stores, "s1", MARCH + timedelta(minutes=i), f"the stock market moved {i} points")
    turns = turns_after(stores.events, SCOPE, "s1", None)
    chunk = stores.chunks.put(
        SCOPE, level_one_chunk(SCOPE, turns, "topics: oolong tea, stocks", MARCH)
    )
    clock.set(WALL)

    everything = ask(stores, "oolong tea", clock)
    assert {("records", record), ("turns", tea_turn), ("chunks", chunk.chunk_id)} <= set(everything)
    assert all("stock market" not in ref for _, ref in everything)
    assert ask(stores, "oolong tea", clock, kinds=frozenset({"turns"})) == [("turns", tea_turn)]
    assert ask(stores, "oolong tea", clock, kinds=frozenset({"chunks"})) == [
        ("chunks", chunk.chunk_id)
    ]
    assert ask(stores, "oolong tea", clock, kinds=frozenset({"records"})) == [("records", record)]


def test_a_period_the_question_names_steers_toward_it_in_the_conversations_time(
    stores: Stores, clock: FixedClock
) -> None:
    march = say(stores, "s1", MARCH, "we planted tomatoes in the garden")
    may = say(stores, "s2", MAY, "in the garden we planted tomatoes")
    clock.set(WALL)

    in_march = recall_both(
        SCOPE,
        RecallQuery(text="what did we plant in the garden last March?"),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        kinds=frozenset({"turns"}),
        index=PassageIndex(),
    )
    assert in_march.now == MAY  # the latest turn, not the wall clock
    assert [h.ref for h in in_march.hits] == [march, may]
    assert in_march.hits[0].in_period
    assert not in_march.hits[1].in_period
    assert in_march.hits[0].score > in_march.hits[1].score
    in_may = ask(stores, "what did we plant in the garden in May 2023?", clock)
    assert [ref for _, ref in in_may] == [may, march]


def test_a_turn_keeps_the_trust_of_who_said_it(stores: Stores, clock: FixedClock) -> None:
    said = say(stores, "s1", MARCH, "my sister lives in Lisbon")
    claimed = say(stores, "s1", MARCH + timedelta(minutes=1), "Lisbon is lovely", Role.ASSISTANT)
    found = recall_both(
        SCOPE,
        RecallQuery(text="Lisbon"),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        index=PassageIndex(),
    )
    trust = {hit.ref: hit.trust for hit in found.hits}
    assert trust == {said: Trust.TRUSTED, claimed: Trust.UNTRUSTED}


def test_a_deleted_turn_or_an_erased_session_is_not_recalled_again(
    stores: Stores, clock: FixedClock
) -> None:
    index = PassageIndex()  # one index across the calls: what it holds must not outlive them

    def recalled() -> set[str]:
        query = RecallQuery(text="the red bicycle")
        found = recall_both(
            SCOPE, query, stores=stores, embedder=EMBEDDER, clock=clock, index=index
        )
        return {hit.ref for hit in found.hits}

    first = say(stores, "s1", MARCH, "I sold the red bicycle")
    second = say(stores, "s1", MARCH + timedelta(minutes=1), "the red bicycle had a bell")
    other = say(stores, "s2", MAY, "I miss the red bicycle")
    assert recalled() == {first, second, other}
    stores.events.delete_event(SCOPE, "s1", first)
    assert recalled() == {second, other}
    erase_session(stores, SCOPE, "s2")
    assert recalled() == {second}


@pytest.mark.parametrize(
    ("query", "kinds"),
    [
        (RecallQuery(text="tea", strategy="semantic"), frozenset({"records", "turns"})),
        (RecallQuery(text="tea", namespace_prefix=FACTS), frozenset({"chunks"})),
        (RecallQuery(text="tea", as_of=MARCH), frozenset({"turns"})),
        (RecallQuery(text="tea"), frozenset()),
        (RecallQuery(text="tea"), frozenset({"events"})),
    ],
)
def test_a_filter_or_kind_history_cannot_honour_is_refused(
    stores: Stores, clock: FixedClock, query: RecallQuery, kinds: frozenset[str]
) -> None:
    say(stores, "s1", MARCH, "tea")
    with pytest.raises(InvalidInputError):
        recall_both(
            SCOPE,
            query,
            stores=stores,
            embedder=EMBEDDER,
            clock=clock,
            kinds=kinds,  # type: ignore[arg-type]
        )


def test_assistant_turns_cannot_crowd_out_the_users_and_a_repeat_is_shown_once(
    stores: Stores, clock: FixedClock
) -> None:
    first = say(stores, "s1", MARCH, "the lighthouse keeper retired")
    again = say(stores, "s1", MARCH + timedelta(minutes=1), "the lighthouse keeper retired")
    for i in range(2, 8):
        say(stores, "s1", MARCH + timedelta(minutes=i), f"lighthouse keeper {i}", Role.ASSISTANT)
    found = recall_both(
        SCOPE,
        RecallQuery(text="lighthouse keeper", top_k=4),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        index=PassageIndex(),
    )

    trusted = [h for h in found.hits if h.trust is Trust.TRUSTED]
    assert [h.text for h in trusted] == ["USER: the lighthouse keeper retired"]
    assert trusted[0].ref in {first, again}
    assert sum(1 for h in found.hits if h.trust is Trust.UNTRUSTED) == 2  # half of top_k
    assert len(found.hits) == 3


def test_the_answer_counts_what_each_channel_searched(stores: Stores, clock: FixedClock) -> None:
    remember(stores, "The user keeps bees")
    remember(stores, "The user lives in Oslo")
    say(stores, "s1", MARCH, "the bees swarmed")
    found = recall_both(
        SCOPE,
        RecallQuery(text="bees"),
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        index=PassageIndex(),
    )
    assert found.searched == {"records": 2, "turns": 1, "chunks": 0}


def test_another_actors_turns_records_and_chunks_are_never_recalled(
    stores: Stores, clock: FixedClock
) -> None:
    assert stores.chunks is not None
    for i in range(10):
        stores.events.append(
            OTHER_ACTOR,
            EventInput(
                session_id="s1",
                event_timestamp=MARCH + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=f"my secret saffron recipe {i}"),),
            ),
        )
    theirs = turns_after(stores.events, OTHER_ACTOR, "s1", None)
    stores.chunks.put(
        OTHER_ACTOR, level_one_chunk(OTHER_ACTOR, theirs, "topics: saffron recipe", MARCH)
    )
    record = NewRecord(namespace="/facts/a2/", content="Saffron recipe is secret", sources=(USER,))
    stores.records.apply(OTHER_ACTOR, [Create(record=record)])
    mine = say(stores, "s1", MARCH, "I bought saffron")

    assert ask(stores, "saffron recipe", clock) == [("turns", mine)]
