"""Query understanding: a question that asks for several things lends context from fewer hits,
alike in the scan and in the recall index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord, Vector
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery, recall
from cairn.recall.candidates import Candidate, CandidatePool
from cairn.recall.expansion import expand
from cairn.recall.index import EmbeddedRecallIndex, TransientRecallIndex
from cairn.recall.question import asks_for_several, context_lenders
from cairn.recall.relevance import Relevant
from cairn.recall.scan import ScanningRecallIndex
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend
from cairn.versioning import plan_writes

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="a1")
POLICY = RecallPolicy(context_weight=0.9, context_span=1, context_hits=3, list_context_hits=1)

SEVERAL = (
    "Which cities has John been to?",
    "What activities does Melanie do with her kids?",
    "How many times has she moved house?",
    "Which city have both Jean and John visited?",
    "What are the names of John's children?",
    "What kinds of art does Caroline make?",
    "what books did she read last year",
)
ONE = (
    "When did Melanie run a charity race?",
    "What does the user drink?",
    "Where does she work now?",
    "What book did Tim just finish reading?",
    "Who is Anthony?",
    "What is her sister's name?",
)


@pytest.mark.parametrize("text", SEVERAL)
def test_a_list_a_count_or_a_shared_answer_asks_for_several(text: str) -> None:
    assert asks_for_several(text)
    assert context_lenders(POLICY, text) == 1


@pytest.mark.parametrize("text", ONE)
def test_a_question_with_one_answer_keeps_every_lender(text: str) -> None:
    assert not asks_for_several(text)
    assert context_lenders(POLICY, text) == 3


def _turn(index: int) -> Candidate:
    record = NewRecord(
        record_id=f"mem-{index:036d}",
        namespace="/facts/a1/",
        content=f"turn {index}",
        sources=(Source(kind=SourceKind.USER, session_id=f"s{index // 3}"),),
        seen_at=T0 + timedelta(seconds=20 * index),
    )
    version = plan_writes(SCOPE, [Create(record=record)], {}, T0)[0].version
    return Candidate(version=version, tokens=(), keyword=0.0)


def test_only_the_best_hit_lends_when_the_question_asks_for_several() -> None:
    # Three sessions of three turns; the middle turn of each is a hit.
    pool = CandidatePool(tuple(_turn(i) for i in range(9)), reembedded=0, embedded=True)
    hits = [Relevant(pool.candidates[i], r) for i, r in ((1, 0.8), (4, 0.7), (7, 0.6))]

    one = expand(hits, pool, POLICY, "When did she move to Lisbon?")
    several = expand(hits, pool, POLICY, "Which cities has she lived in?")

    assert one.admitted == 6  # both neighbours of every hit
    assert several.admitted == 2  # the best hit's neighbours only
    lent = {r.candidate.version.record_id[-1] for r in several.relevant}
    assert lent == {"0", "1", "2", "4", "7"}


def test_the_index_lends_from_the_same_hits_as_the_scan() -> None:
    clock = FixedClock(T0)
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    embedder = HashingEmbedder(dims=32)
    contents = [
        "we flew to Lisbon in spring",
        "the hotel was near the river",
        "Kyoto was next on the list",
        "we visited Porto for the food",
        "the train was late again",
        "Madrid in the summer heat",
    ]
    for i, content in enumerate(contents):
        vector = Vector(embedder=embedder.identity, values=tuple(embedder.embed([content])[0]))
        record = NewRecord(
            namespace="/facts/a1/",
            content=content,
            sources=(Source(kind=SourceKind.USER, session_id=f"s{i // 2}"),),
            seen_at=T0 + timedelta(seconds=20 * i),
            vector=vector,
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    clock.advance(seconds=60)
    policy = RecallPolicy(relevance_floor=0.0, weak_floor=0.0, context_span=1)
    for text in ("Which cities have we been to?", "When did we fly to Lisbon?"):
        answers = [
            recall(
                SCOPE,
                RecallQuery(text=text, top_k=6),
                stores=stores,
                embedder=embedder,
                clock=clock,
                policy=policy,
                journal=False,
                index=index,
            )
            for index in (
                ScanningRecallIndex(stores.records),
                EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1),
            )
        ]
        scan, indexed = answers
        assert scan.block == indexed.block
        assert [(e.version.record_id, e.score) for e in scan.entries] == [
            (e.version.record_id, e.score) for e in indexed.entries
        ]
        assert scan.counts == indexed.counts


WORDS = ("tea", "coffee", "lisbon", "kyoto", "sister", "dog", "chess", "running")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    said=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), min_size=6, max_size=18
    ),
    asked=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    lenders=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    several=st.booleans(),
)
def test_a_conversation_ranks_alike_in_the_scan_and_the_index(
    said: list[list[str]], asked: list[str], lenders: tuple[int, int], several: bool
) -> None:
    """Turns told 20 s apart in three interleaved sessions, so every hit has neighbours: for a
    question asking for several things or not, every index lends from the scan's hits."""
    clock = FixedClock(T0)
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    embedder = HashingEmbedder(dims=32)
    for i, words in enumerate(said):
        content = " ".join(words)
        vector = Vector(embedder=embedder.identity, values=tuple(embedder.embed([content])[0]))
        record = NewRecord(
            namespace="/facts/a1/",
            content=content,
            sources=(Source(kind=SourceKind.USER, session_id=f"s{i % 3}"),),
            seen_at=T0 + timedelta(seconds=20 * i),
            vector=vector,
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    clock.advance(seconds=60)
    hits, list_hits = lenders
    policy = RecallPolicy(
        relevance_floor=0.0, weak_floor=0.0, context_hits=hits, list_context_hits=list_hits
    )
    text = ("how many " if several else "when ") + " ".join(asked)
    query = RecallQuery(text=text, top_k=10)
    seen = []
    for index in (
        ScanningRecallIndex(stores.records),
        TransientRecallIndex(stores.records, shortlist=1),
        EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1),
    ):
        found = recall(
            SCOPE,
            query,
            stores=stores,
            embedder=embedder,
            clock=clock,
            policy=policy,
            journal=False,
            index=index,
        )
        entries = [(e.version.record_id, e.score, e.relevance) for e in found.entries]
        seen.append((found.block, entries, found.counts))
    assert seen[1] == seen[0]
    assert seen[2] == seen[0]
