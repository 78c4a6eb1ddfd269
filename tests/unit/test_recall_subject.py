"""Query understanding: the subject left out of the embedded query (and scoring no keyword on its
own), and the confidence bar that labels a block weak; all exactly alike in the scan and in the
recall index."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.candidates import gather
from cairn.recall.index import EmbeddedRecallIndex
from cairn.recall.keywords import tokenize
from cairn.recall.relevance import confident
from cairn.recall.scan import ScanningRecallIndex
from cairn.recall.subject import (
    MIN_ROWS,
    embedding_text,
    only_the_subject_matched,
    subject_left_out,
    subject_terms,
)
from cairn.testing import InMemoryBackend

SCOPE = Scope(memory_id="mem-subject", actor_id="user-1")
EMBEDDER = HashingEmbedder(dims=64)
FACTS = (
    "Kenji is married to Robin",
    "Kenji's home is in Toronto",
    "Kenji is employed by Acme Robotics",
    "Kenji has a law degree from Coimbra",
    "User owns a parrot named Kiwi",
    "User prefers green tea in the morning",
    "I drive an electric Kia",
    "I speak Portuguese fluently",
    "Kenji takes meetings only after lunch",
)


def _frequency(rows: dict[str, int]) -> object:
    return lambda term: rows.get(term, 0)


def test_a_name_most_rows_hold_is_left_out_of_the_embedded_query() -> None:
    counts = {"kenji": 5, "user": 3, "vehicl": 0}
    text = embedding_text("What vehicle does Kenji have?", _frequency(counts), 10, 0.2)
    assert text == "What vehicle does have?"
    # "the user's" goes whole: article, word and possessive.
    text = embedding_text("What's the user's usual beverage?", _frequency(counts), 10, 0.2)
    assert text == "What's usual beverage?"


def test_the_query_stays_whole_when_the_name_is_rare_off_small_or_all_there_is() -> None:
    counts = {"kenji": 1, "lisbon": 9}
    assert embedding_text("Where is Kenji?", _frequency(counts), 10, 0.2) == "Where is Kenji?"
    # Only names and "user" count as the subject: a common lower-case word stays.
    assert embedding_text("trips to lisbon", _frequency(counts), 10, 0.05) == "trips to lisbon"
    many = {"kenji": 9}
    assert embedding_text("Where is Kenji?", _frequency(many), 10, 0.0) == "Where is Kenji?"
    assert embedding_text("Where is Kenji?", _frequency(many), MIN_ROWS - 1, 0.2) == (
        "Where is Kenji?"
    )
    # Nothing but the name would be left: the query is embedded as asked.
    assert embedding_text("Kenji?", _frequency(many), 10, 0.2) == "Kenji?"


def test_the_rewrite_and_the_subject_only_check_read_together_as_apart() -> None:
    asked = (
        "What vehicle does Kenji have?",
        "Where is Kenji?",
        "Kenji?",
        "What's the user's usual beverage?",
        "trips to lisbon",
    )
    rows = ({"kenji": 5}, {"kenji": 5, "vehicl": 1}, {"kenji": 1}, {"user": 9, "beverag": 0}, {})
    for text in asked:
        for counts in rows:
            for total, share in ((10, 0.2), (10, 0.0), (MIN_ROWS - 1, 0.2)):
                frequency = _frequency(counts)
                embedded = embedding_text(text, frequency, total, share)
                rest = tokenize(embedded)
                only = set(rest) != set(tokenize(text)) and not any(map(frequency, rest))
                together = subject_left_out(text, tokenize(text), frequency, total, share)
                assert together == (embedded, only), (text, counts, total, share)
                assert only_the_subject_matched(text, frequency, total, share) == only


def test_only_the_subject_matched_when_no_row_holds_the_other_words() -> None:
    asked = "What does Kenji drive?"
    assert only_the_subject_matched(asked, _frequency({"kenji": 5}), 10, 0.2)
    # A row holds "drive": the name still counts beside it.
    held = {"kenji": 5, **dict.fromkeys(tokenize("drive"), 1)}
    assert not only_the_subject_matched(asked, _frequency(held), 10, 0.2)
    # The name is no subject (rare, share off, too few rows), or nothing else was asked.
    assert not only_the_subject_matched(asked, _frequency({"kenji": 1}), 10, 0.2)
    assert not only_the_subject_matched(asked, _frequency({"kenji": 5}), 10, 0.0)
    assert not only_the_subject_matched(asked, _frequency({"kenji": 5}), MIN_ROWS - 1, 0.2)
    assert not only_the_subject_matched("Kenji?", _frequency({"kenji": 5}), 10, 0.2)


def _keywords(stores: Stores, text: str, policy: RecallPolicy) -> dict[str, float]:
    asked = RecallQuery(text=text)
    pool = gather(SCOPE, asked, records=stores.records, embedder=EMBEDDER, policy=policy)
    return {c.version.content: c.keyword for c in pool.candidates}


def test_a_match_on_the_subject_alone_scores_no_keyword() -> None:
    # Five of nine rows name Kenji, none says "sing": each Kenji row used to take a keyword
    # share the others had not, for a name that is no evidence.
    stores, _, _ = _store()
    policy = RecallPolicy(subject_share=0.3)
    assert set(_keywords(stores, "What does Kenji sing?", policy).values()) == {0.0}
    whole = policy.model_copy(update={"subject_share": 0.0})
    named = _keywords(stores, "What does Kenji sing?", whole)
    assert all(score > 0 for content, score in named.items() if "Kenji" in content)
    # When another word matches, the name still counts beside it.
    driving = _keywords(stores, "What does Kenji drive?", policy)
    assert driving["I drive an electric Kia"] > 0
    assert all(score > 0 for content, score in driving.items() if "Kenji" in content)


def test_subject_terms_are_the_capitalised_words_and_user() -> None:
    assert subject_terms("Does the user know Ana in Lisbon?") == ["user", "ana", "lisbon"]
    assert subject_terms("what does she drink") == []


@pytest.mark.parametrize(
    ("cosines", "share", "sure"),
    [
        ([0.6, 0.2, 0.2, 0.2, 0.2], 0.0, True),  # the best cosine is high
        ([0.4, 0.2, 0.2, 0.2, 0.2], 0.0, True),  # it stands out from the fifth
        ([0.4, 0.35, 0.3, 0.3, 0.3], 0.0, False),  # neither
        ([0.4, 0.35, 0.3, 0.3, 0.3], 0.6, True),  # the words are there
        ([], 0.0, False),
    ],
)
def test_the_confidence_bar(cosines: list[float], share: float, sure: bool) -> None:
    policy = RecallPolicy(confident_cosine=0.5, confident_margin=0.16, confident_keyword=0.5)
    assert confident(cosines, share, policy) is sure


def _store() -> tuple[Stores, InMemoryBackend, FixedClock]:
    clock = FixedClock(datetime(2026, 3, 1, tzinfo=UTC))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    for fact in FACTS:
        values = tuple(float(x) for x in EMBEDDER.embed([fact])[0])
        record = NewRecord(
            namespace=f"/facts/{SCOPE.actor_id}/",
            content=fact,
            sources=(Source(kind=SourceKind.USER),),
            vector=Vector(embedder=EMBEDDER.identity, values=values),
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    return stores, backend, clock


def _recalled(stores: Stores, index: object, policy: RecallPolicy, text: str) -> Recollection:
    return recall(
        SCOPE,
        RecallQuery(text=text),
        stores=stores,
        embedder=EMBEDDER,
        clock=FixedClock(datetime(2026, 3, 2, tzinfo=UTC)),
        policy=policy,
        journal=False,
        index=index,  # type: ignore[arg-type]
    )


def _seen(found: Recollection) -> tuple[object, ...]:
    return (
        found.block,
        tuple((e.version.record_id, e.score, e.cosine) for e in found.entries),
        found.counts,
    )


@pytest.mark.parametrize(
    "text",
    [
        "What vehicle does Kenji drive?",
        "Where is Kenji's home?",
        "Is Kenji married?",
        "Kenji sings?",
    ],
)
@pytest.mark.parametrize("margin", [0.0, 0.1, 0.3, 1.0])
def test_index_and_scan_embed_the_same_rewritten_query_and_agree_on_weak(
    text: str, margin: float
) -> None:
    stores, backend, _ = _store()
    rewriting = RecallPolicy(
        subject_share=0.3,
        relevance_floor=0.0,
        confident_cosine=0.9,
        confident_margin=margin,
        confident_keyword=1.01,
    )
    whole = rewriting.model_copy(update={"subject_share": 0.0})
    scanned = _recalled(stores, ScanningRecallIndex(stores.records), rewriting, text)
    index = EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1)
    assert _seen(_recalled(stores, index, rewriting, text)) == _seen(scanned)
    # The rewrite did change the cosines, so the comparison above had something to compare.
    plain = _recalled(stores, ScanningRecallIndex(stores.records), whole, text)
    assert [e.cosine for e in plain.entries] != [e.cosine for e in scanned.entries]
    # A margin of 0 is always met; no cosine stands a whole 1.0 above the fifth best here.
    if margin in (0.0, 1.0):
        assert scanned.counts.weak is (margin == 1.0)
