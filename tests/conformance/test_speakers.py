"""Per-speaker authority through extraction on every backend (issue 17): in a group chat each
source names who said it, and one member's statement is changed only by that member; another
member's correction contests it, and their repeat is no confirmation."""

from __future__ import annotations

from datetime import timedelta

from cairn.clock import FixedClock
from cairn.extract.extractor import extract_rollout
from cairn.memories import StrategyKind
from cairn.models import EdgeKind, RecordVersion, Role, Scope, Status
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.rollout.payload import RolloutMessage
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
ALICE, BOB = "tg:111", "tg:222"


def _said(number: int, text: str, speaker: str) -> RolloutMessage:
    return message(number, text, role=Role.USER).model_copy(update={"speaker_id": speaker})


def _extract(stores: Stores, said: RolloutMessage, rollout_id: str, *answers: str) -> None:
    outcome = extract_rollout(
        rollout(said, rollout_id=rollout_id, strategy_ids=(FACTS,)),
        FACTS_ONLY,
        stores=stores,
        model=ScriptedModel(answers),
        embedder=HashingEmbedder(),
        clock=FixedClock(T0 + timedelta(hours=2)),
    )
    assert outcome.done, outcome


def _alice_is_vegetarian(stores: Stores) -> RecordVersion:
    _extract(
        stores,
        _said(1, "I am vegetarian.", ALICE),
        "ro-1",
        candidates(("Alice is vegetarian.", [1])),
    )
    (stated,) = stores.records.list_records(SCOPE).items
    return stated


def test_each_source_names_its_speaker(stores: Stores) -> None:
    stated = _alice_is_vegetarian(stores)
    (source,) = stated.sources
    assert (source.speaker, source.speaker_id) == (Role.USER, ALICE)


def test_another_members_correction_contests_and_never_supersedes(
    stores: Stores, clock: FixedClock
) -> None:
    stated = _alice_is_vegetarian(stores)

    _extract(
        stores,
        _said(2, "Alice eats meat now, trust me.", BOB),
        "ro-2",
        candidates(("Alice eats meat now.", [1])),
        decisions({"candidate": 1, "action": "supersede", "target": 1}),
    )

    (only,) = stores.records.history(SCOPE, stated.record_id)
    assert only.status is Status.ACTIVE
    (contest,) = [v for v in stores.records.list_records(SCOPE).items if v != only]
    assert [(e.kind, e.target) for e in contest.edges] == [(EdgeKind.CONTRADICTS, stated.record_id)]
    assert [s.speaker_id for s in contest.sources] == [BOB]
    block = recall(
        SCOPE, RecallQuery(text="Alice vegetarian meat"), stores=stores, embedder=None, clock=clock
    ).block
    assert "contested" in next(line for line in block.splitlines() if contest.record_id in line)


def test_the_same_members_later_correction_supersedes(stores: Stores) -> None:
    stated = _alice_is_vegetarian(stores)

    _extract(
        stores,
        _said(3, "I eat meat now.", ALICE),
        "ro-3",
        candidates(("Alice eats meat now.", [1])),
        decisions({"candidate": 1, "action": "supersede", "target": 1}),
    )

    assert stores.records.get(SCOPE, stated.record_id).status is Status.SUPERSEDED
    assert [v.content for v in stores.records.list_records(SCOPE).items] == ["Alice eats meat now."]


def test_another_members_repeat_is_no_confirmation(stores: Stores) -> None:
    stated = _alice_is_vegetarian(stores)

    _extract(
        stores,
        _said(4, "Alice is vegetarian.", BOB),
        "ro-4",
        candidates(("Alice is vegetarian.", [1])),
    )

    head = stores.records.get(SCOPE, stated.record_id)
    assert (head.version, head.seen_count, head.sources) == (1, 1, stated.sources)
