"""Which existing records formation compares a candidate with: its own namespace's live ones."""

from __future__ import annotations

from cairn.changes import Create, NewRecord, Retract
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY
from cairn.extract.formation.apply import with_vectors
from cairn.extract.formation.neighbours import nearest, read_namespace
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend
from tests.unit.extraction_inputs import T0

SCOPE = Scope(memory_id="support-AbCdEf1234", actor_id="tg:12345")
FACTS = "/facts/tg:12345/"
MODEL = Source(kind=SourceKind.MODEL, rollout_id="ro-0")


def _record(content: str, namespace: str = FACTS) -> NewRecord:
    return NewRecord(namespace=namespace, content=content, sources=(MODEL,))


def _stores(*records: NewRecord, embed: bool = True) -> Stores:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    made = with_vectors(records, HashingEmbedder()) if embed else list(records)
    stores.records.apply(SCOPE, [Create(record=r) for r in made])
    return stores


def test_only_live_records_of_exactly_the_candidate_s_namespace_are_neighbours() -> None:
    stores = _stores(
        _record("The user lives in Lisbon."),
        _record("The user lives in Lisbon.", namespace=f"{FACTS}archive/"),
        _record("The user lives in Lisbon, Portugal."),
    )
    state = read_namespace(SCOPE, FACTS, stores.records)
    retracted = next(v for v in state.live if v.content.endswith("Portugal."))
    stores.records.apply(SCOPE, [Retract(record_id=retracted.record_id)])
    state = read_namespace(SCOPE, FACTS, stores.records)

    (found,) = nearest(
        with_vectors([_record("The user lives in Lisbon.")], HashingEmbedder()),
        state.live,
        scope=SCOPE,
        records=stores.records,
        embedder=HashingEmbedder(),
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    assert [(n.version.namespace, n.version.content) for n in found] == [
        (FACTS, "The user lives in Lisbon.")
    ]
    assert len(state.heads) == 2  # the retracted one is read (its sources still count)
    assert state.citing("ro-0") == state.heads


def test_a_record_without_a_stored_vector_is_embedded_on_the_fly_and_compared() -> None:
    stores = _stores(_record("The user plays the cello."), embed=False)
    state = read_namespace(SCOPE, FACTS, stores.records)
    (found,) = nearest(
        [_record("The user plays the cello every day.")],
        state.live,
        scope=SCOPE,
        records=stores.records,
        embedder=HashingEmbedder(),
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    (neighbour,) = found
    assert neighbour.cosine is not None
    assert neighbour.cosine > DEFAULT_EXTRACTION_POLICY.related_cosine


def test_without_an_embedder_neighbours_are_found_by_shared_words() -> None:
    stores = _stores(_record("The user plays the cello."), _record("The user owns a red bicycle."))
    state = read_namespace(SCOPE, FACTS, stores.records)
    (found,) = nearest(
        [_record("The user practises cello on weekends.")],
        state.live,
        scope=SCOPE,
        records=stores.records,
        embedder=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    assert [n.version.content for n in found] == ["The user plays the cello."]
    assert found[0].cosine is None
