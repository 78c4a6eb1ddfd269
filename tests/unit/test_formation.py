"""Formation: fold-in, merge, supersede or create; humble about what the user stated."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.answers.extraction import Action, Decision
from cairn.changes import Create, FoldIn, NewRecord, Revise, Supersede
from cairn.errors import InvalidModelOutputError
from cairn.extract.formation.neighbours import Neighbour
from cairn.extract.formation.plan import plan_formation, snapshot_of
from cairn.extract.prompts import FormationInput
from cairn.models import (
    EdgeKind,
    RecordVersion,
    Role,
    Scope,
    Source,
    SourceKind,
    Trust,
    content_digest,
)
from cairn.versioning import plan_writes
from tests.unit.extraction_inputs import T0

SCOPE = Scope(memory_id="support-AbCdEf1234", actor_id="tg:12345")
NAMESPACE = "/facts/tg:12345/"
USER = Source(kind=SourceKind.USER, event_id="e-user")
MODEL = Source(kind=SourceKind.MODEL, event_id="e-1", rollout_id="ro-1", session_id="chat-1")
# The model reading the user's own turn: independent evidence, with the user's authority.
USER_TURN = MODEL.model_copy(update={"speaker": Role.USER})


def head(
    content: str,
    *,
    sources: tuple[Source, ...] = (USER,),
    confidence: float = 0.9,
    tags: tuple[str, ...] = (),
    strategy: str = "semantic",
    namespace: str = NAMESPACE,
) -> RecordVersion:
    record = NewRecord(
        namespace=namespace,
        strategy=strategy,
        content=content,
        confidence=confidence,
        tags=tags,
        sources=sources,
    )
    (write,) = plan_writes(SCOPE, [Create(record=record)], {}, T0)
    return write.version


def candidate(
    content: str,
    *,
    confidence: float = 0.7,
    tags: tuple[str, ...] = (),
    sources: tuple[Source, ...] = (MODEL,),
    strategy: str = "semantic",
    namespace: str = NAMESPACE,
) -> NewRecord:
    return NewRecord(
        namespace=namespace,
        strategy=strategy,
        content=content,
        confidence=confidence,
        tags=tags,
        sources=sources,
        seen_at=T0 + timedelta(days=1),
    )


class RecordingJudge:
    """Decides every candidate the same way against its first related memory."""

    def __init__(self, action: Action = "create", content: str | None = None) -> None:
        self.action = action
        self.content = content
        self.documents: list[FormationInput] = []

    def __call__(self, document: FormationInput) -> Sequence[Decision]:
        self.documents.append(document)
        return [
            Decision(
                candidate=case.candidate,
                action=self.action,
                target=None if self.action == "create" else case.related[0],
                content=self.content if self.action == "merge" else None,
            )
            for case in document.candidates
        ]


def near(*versions: RecordVersion, cosine: float | None = None) -> list[Neighbour]:
    return [Neighbour(version=v, cosine=cosine) for v in versions]


def test_an_exact_repeat_folds_in_without_asking_the_judge() -> None:
    existing = head("The user is allergic to peanuts.", sources=(MODEL,))
    judge = RecordingJudge()
    (change,) = plan_formation(
        [candidate("the user is  allergic to PEANUTS.", sources=(USER_TURN,))],
        [near(existing)],
        judge,
    )
    assert isinstance(change, FoldIn)
    assert change.record_id == existing.record_id
    assert change.add_sources == (USER_TURN,)
    assert judge.documents == []


def test_a_repeat_by_the_assistant_is_an_echo_and_changes_nothing() -> None:
    existing = head("The user is allergic to peanuts.", sources=(MODEL,))
    echo = MODEL.model_copy(update={"speaker": Role.ASSISTANT})
    changes = plan_formation(
        [candidate("The user is allergic to peanuts.", sources=(echo,))],
        [near(existing)],
        RecordingJudge(),
    )
    assert changes == []


def test_a_near_exact_repeat_folds_in_but_a_negation_never_does() -> None:
    existing = head("The user likes green tea a lot.", sources=(MODEL,))
    judge = RecordingJudge("create")
    close = plan_formation(
        [candidate("The user likes green tea a lot!", sources=(USER_TURN,))],
        [near(existing, cosine=0.97)],
        judge,
    )
    assert isinstance(close[0], FoldIn)
    negated = plan_formation(
        [candidate("The user does not like green tea a lot.")],
        [near(existing, cosine=0.97)],
        judge,
    )
    assert isinstance(negated[0], Create)
    assert len(judge.documents) == 1


def test_without_neighbours_a_candidate_is_created_and_nobody_is_asked() -> None:
    judge = RecordingJudge("merge", "x")
    (change,) = plan_formation([candidate("The user has a cat named Tom.")], [[]], judge)
    assert isinstance(change, Create)
    assert judge.documents == []


def test_the_judge_sees_aliases_and_never_a_record_id() -> None:
    first = head("The user lives in Lisbon.")
    second = head("The user works at a bank.", sources=(MODEL,))
    judge = RecordingJudge("create")
    plan_formation(
        [candidate("The user lives in Porto."), candidate("The user works at a school.")],
        [near(first, second), near(second)],
        judge,
    )
    (document,) = judge.documents
    rendered = document.model_dump_json()
    assert "mem-" not in rendered
    assert first.record_id not in rendered
    assert [m.alias for m in document.existing] == [1, 2]
    assert [c.related for c in document.candidates] == [(1, 2), (2,)]
    assert [m.stated_by for m in document.existing] == ["user", "inferred"]


def test_a_merge_evolves_an_inferred_record_keeping_the_higher_confidence() -> None:
    existing = head("The user lives in Lisbon.", sources=(MODEL,), confidence=0.6, tags=("home",))
    judge = RecordingJudge("merge", "The user lives in Lisbon, in Alfama.")
    (change,) = plan_formation(
        [candidate("The user lives in Alfama.", confidence=0.5, tags=("city",))],
        [near(existing)],
        judge,
    )
    assert isinstance(change, Revise)
    assert change.patch.content == "The user lives in Lisbon, in Alfama."
    assert change.patch.confidence is None  # 0.6 stays: a merge never lowers confidence
    assert change.patch.tags == ("home", "city")


def test_a_merge_never_rewrites_what_the_user_stated() -> None:
    # Untrusted evidence never merges into a user-stated record (issue 17): not its text, and
    # not its tags or confidence either; it is filed beside it.
    existing = head("I am vegetarian.", confidence=0.9)
    judge = RecordingJudge("merge", "The user is vegetarian but eats fish.")
    (change,) = plan_formation(
        [candidate("The user eats fish.", tags=("diet",))], [near(existing)], judge
    )
    assert isinstance(change, Create)
    assert change.record.content == "The user eats fish."
    assert [(e.kind, e.target) for e in change.record.edges] == [
        (EdgeKind.RELATES_TO, existing.record_id)
    ]


def test_a_model_never_retires_a_user_stated_record_it_files_beside_it_instead() -> None:
    existing = head("My office is in Lisbon.")
    (change,) = plan_formation(
        [candidate("The user's office is in Porto.")], [near(existing)], RecordingJudge("supersede")
    )
    assert isinstance(change, Create)
    # It disputes the user's record: a contradicts edge, rendered as contested (issue 17).
    assert any(
        e.kind is EdgeKind.CONTRADICTS and e.target == existing.record_id
        for e in change.record.edges
    )


TOOL_OUTPUT = Source(kind=SourceKind.TOOL, run_id="run-1")
FROM_THE_USER = Source(
    kind=SourceKind.MODEL, event_id="e-9", rollout_id="ro-9", session_id="chat-1", speaker=Role.USER
)
FROM_THE_ASSISTANT = FROM_THE_USER.model_copy(update={"speaker": Role.ASSISTANT})


@pytest.mark.parametrize("action", ["same", "merge", "supersede"])
@pytest.mark.parametrize("evidence", [TOOL_OUTPUT, FROM_THE_ASSISTANT, MODEL])
def test_untrusted_evidence_never_folds_merges_or_supersedes_a_user_statement(
    action: Action, evidence: Source
) -> None:
    existing = head("Allergic to penicillin.")
    changes = plan_formation(
        [candidate("No known drug allergies.", sources=(evidence,), confidence=0.99)],
        [near(existing, cosine=0.5)],
        RecordingJudge(action, "No known drug allergies."),
    )
    assert all(isinstance(change, Create) for change in changes)
    assert all(c.record_id != existing.record_id for c in changes if not isinstance(c, Create))


def test_a_users_later_correction_extracted_by_the_model_supersedes_what_they_said() -> None:
    existing = head("Is vegetarian.")
    (change,) = plan_formation(
        [candidate("Eats meat now.", sources=(FROM_THE_USER,))],
        [near(existing)],
        RecordingJudge("supersede"),
    )
    assert isinstance(change, Supersede)
    assert change.record_id == existing.record_id


def test_an_earlier_user_statement_never_replaces_a_later_one() -> None:
    existing = head("Eats meat now.")
    earlier = candidate("Is vegetarian.", sources=(FROM_THE_USER,)).model_copy(
        update={"seen_at": T0 - timedelta(days=3)}
    )
    (change,) = plan_formation([earlier], [near(existing)], RecordingJudge("supersede"))
    assert isinstance(change, Create)


def test_a_supersede_replaces_an_inferred_record() -> None:
    existing = head("The user's office is in Lisbon.", sources=(MODEL,))
    (change,) = plan_formation(
        [candidate("The user's office is in Porto.")], [near(existing)], RecordingJudge("supersede")
    )
    assert isinstance(change, Supersede)
    assert change.record_id == existing.record_id
    assert snapshot_of([change], {existing.record_id: existing}) == {existing.record_id: 1}


def test_repeats_within_one_batch_are_one_record_with_every_source() -> None:
    other = Source(kind=SourceKind.MODEL, event_id="e-2", rollout_id="ro-1")
    changes = plan_formation(
        [
            candidate("The user has two kids.", tags=("family",)),
            candidate("the user has two kids.", sources=(other,), confidence=0.6),
        ],
        [[], []],
        RecordingJudge(),
    )
    (change,) = changes
    assert isinstance(change, Create)
    assert change.record.sources == (MODEL, other)
    assert change.record.confidence == 0.7


def test_two_candidates_aimed_at_one_record_make_one_change_and_lose_nothing() -> None:
    existing = head("The user lives in Lisbon.", sources=(MODEL,))
    judge = RecordingJudge("merge", "The user lives in Lisbon, near the river.")
    changes = plan_formation(
        [candidate("The user lives near the river."), candidate("The user lives in a flat.")],
        [near(existing), near(existing)],
        judge,
    )
    assert [type(c) for c in changes] == [Revise, Create]
    writes = plan_writes(SCOPE, changes, {existing.record_id: existing}, T0)
    assert len(writes) == 2


def test_a_session_summary_evolves_in_place_without_the_judge() -> None:
    summary_ns = "/summaries/tg:12345/chat-1/"
    existing = head(
        "The user planned a trip.", sources=(MODEL,), strategy="summary", namespace=summary_ns
    )
    judge = RecordingJudge()
    (change,) = plan_formation(
        [candidate("The user planned a trip to Oslo.", strategy="summary", namespace=summary_ns)],
        [near(existing, cosine=0.99)],
        judge,
    )
    assert isinstance(change, Revise)
    assert change.patch.content == "The user planned a trip to Oslo."
    assert judge.documents == []


def test_a_judge_that_skips_a_candidate_or_invents_a_target_is_refused() -> None:
    existing = head("The user lives in Lisbon.", sources=(MODEL,))

    def skipping(document: FormationInput) -> Sequence[Decision]:
        return []

    def inventing(document: FormationInput) -> Sequence[Decision]:
        return [Decision(candidate=1, action="same", target=9)]

    for judge in (skipping, inventing):
        with pytest.raises(InvalidModelOutputError):
            plan_formation([candidate("The user lives in Porto.")], [near(existing)], judge)


# --- properties ------------------------------------------------------------------------------

words = st.text(alphabet="abcdefgh ", min_size=3, max_size=40).filter(lambda t: t.strip())
labels = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3, unique=True).map(tuple)
actions = st.sampled_from(["create", "same", "merge", "supersede"])


@settings(max_examples=150, deadline=None)
@given(
    stated=words,
    stated_confidence=st.floats(0.0, 1.0),
    stated_tags=labels,
    proposed=words,
    proposed_confidence=st.floats(0.0, 0.7),
    proposed_tags=labels,
    merged=words,
    action=actions,
    cosine=st.none() | st.floats(0.0, 1.0),
)
def test_a_model_sourced_candidate_never_rewrites_retires_or_demotes_a_user_stated_record(
    stated: str,
    stated_confidence: float,
    stated_tags: tuple[str, ...],
    proposed: str,
    proposed_confidence: float,
    proposed_tags: tuple[str, ...],
    merged: str,
    action: Action,
    cosine: float | None,
) -> None:
    existing = head(stated, confidence=stated_confidence, tags=stated_tags)
    changes = plan_formation(
        [candidate(proposed, confidence=proposed_confidence, tags=proposed_tags)],
        [near(existing, cosine=cosine)],
        RecordingJudge(action, merged.strip()),
    )
    writes = plan_writes(SCOPE, changes, {existing.record_id: existing}, T0 + timedelta(days=2))
    for write in writes:
        version = write.version
        if version.record_id == existing.record_id:
            assert version.content == existing.content
            assert version.content_digest == content_digest(existing.content)
            assert version.confidence >= existing.confidence
            assert version.live
            assert set(existing.tags) <= set(version.tags)
        else:
            assert version.trust is Trust.UNTRUSTED  # what the model filed is never trusted


@settings(max_examples=150, deadline=None)
@given(
    stated=words,
    stated_confidence=st.floats(0.0, 1.0),
    proposed=words,
    proposed_confidence=st.floats(0.0, 1.0),
    merged=words,
    action=actions,
    trusted_candidate=st.booleans(),
)
def test_no_formation_lowers_confidence_and_trust_never_rises(
    stated: str,
    stated_confidence: float,
    proposed: str,
    proposed_confidence: float,
    merged: str,
    action: Action,
    trusted_candidate: bool,
) -> None:
    existing = head(stated, sources=(MODEL,), confidence=stated_confidence)
    sources = (USER,) if trusted_candidate else (MODEL,)
    changes = plan_formation(
        [candidate(proposed, confidence=proposed_confidence, sources=sources)],
        [near(existing)],
        RecordingJudge(action, merged.strip()),
    )
    writes = plan_writes(SCOPE, changes, {existing.record_id: existing}, T0 + timedelta(days=2))
    for write in writes:
        if write.version.record_id == existing.record_id:
            assert write.version.trust is Trust.UNTRUSTED
            assert write.version.confidence >= existing.confidence
