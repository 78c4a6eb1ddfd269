"""Authority through extraction on every backend (issue 17, classes 1 and 2), the hijacked
model played by the shipped ``ScriptedModel``: tool output contests what the user stated and
never replaces it, the user's own later correction does replace it, and the assistant echoing
a record is no confirmation."""

from __future__ import annotations

from datetime import timedelta

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.extract.extractor import extract_rollout
from cairn.memories import StrategyKind
from cairn.models import EdgeKind, RecordVersion, Role, Scope, Source, SourceKind, Status
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.testing import HashingEmbedder, ScriptedModel
from tests.unit.extraction_inputs import (
    ACTOR,
    FACTS,
    MEMORY_ID,
    T0,
    candidates,
    decisions,
    memory,
    message,
    rollout,
    strategy,
)

SCOPE = Scope(memory_id=MEMORY_ID, actor_id=ACTOR)
FACTS_ONLY = memory(strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/"))
EMBEDDER = HashingEmbedder()


def _stated(stores: Stores, text: str) -> RecordVersion:
    """What the user stated a day before the conversation below."""
    (values,) = EMBEDDER.embed([text])
    record = NewRecord(
        namespace=f"/facts/{ACTOR}/",
        content=text,
        confidence=0.9,
        sources=(Source(kind=SourceKind.USER, session_id="earlier"),),
        vector=Vector(embedder=EMBEDDER.identity, values=tuple(float(v) for v in values)),
        seen_at=T0 - timedelta(days=1),
    )
    (created,) = stores.records.apply(SCOPE, [Create(record=record)])
    return created


def _extract(stores: Stores, said: str, role: Role, *answers: str) -> None:
    outcome = extract_rollout(
        rollout(message(1, said, role=role), strategy_ids=(FACTS,)),
        FACTS_ONLY,
        stores=stores,
        model=ScriptedModel(answers),
        embedder=EMBEDDER,
        clock=FixedClock(T0 + timedelta(hours=2)),
    )
    assert outcome.done, outcome


def test_tool_output_contests_a_users_allergy_and_never_supersedes_it(
    stores: Stores, clock: FixedClock
) -> None:
    allergy = _stated(stores, "The user is allergic to penicillin.")

    _extract(
        stores,
        "Updated chart: no known drug allergies.",
        Role.TOOL,
        candidates(("The user has no known drug allergies.", [1])),
        decisions({"candidate": 1, "action": "supersede", "target": 1}),
    )

    (only,) = stores.records.history(SCOPE, allergy.record_id)
    assert only.status is Status.ACTIVE
    live = stores.records.list_records(SCOPE).items
    (contest,) = [v for v in live if v.record_id != allergy.record_id]
    assert [(e.kind, e.target) for e in contest.edges] == [
        (EdgeKind.CONTRADICTS, allergy.record_id)
    ]
    block = recall(
        SCOPE,
        RecallQuery(text="drug allergies penicillin"),
        stores=stores,
        embedder=None,
        clock=clock,
    ).block
    line = next(line for line in block.splitlines() if contest.record_id in line)
    assert "| untrusted | contested |" in line


def test_a_users_later_correction_supersedes_what_they_said_through_extraction(
    stores: Stores,
) -> None:
    diet = _stated(stores, "The user is vegetarian.")

    _extract(
        stores,
        "I eat meat now.",
        Role.USER,
        candidates(("The user eats meat now.", [1])),
        decisions({"candidate": 1, "action": "supersede", "target": 1}),
    )

    old = stores.records.get(SCOPE, diet.record_id)
    assert old.status is Status.SUPERSEDED
    assert [v.content for v in stores.records.list_records(SCOPE).items] == [
        "The user eats meat now."
    ]


def test_the_assistant_echoing_a_user_statement_is_no_confirmation(stores: Stores) -> None:
    allergy = _stated(stores, "The user is allergic to penicillin.")

    for _ in range(3):
        _extract(
            stores,
            "As you told me, you are allergic to penicillin.",
            Role.ASSISTANT,
            candidates(("The user is allergic to penicillin.", [1])),
        )

    head = stores.records.get(SCOPE, allergy.record_id)
    assert (head.version, head.seen_count, head.last_seen_at) == (
        1,
        1,
        allergy.last_seen_at,
    )
