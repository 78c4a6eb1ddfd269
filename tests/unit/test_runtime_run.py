"""Runs: the recall block is assembled once and stays byte-identical for the run (prefix
stability); per-turn recall adds only fresh, relevant memories, and journals each injection."""

from __future__ import annotations

import pytest

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import replay
from cairn.recall.render import CAVEAT, HEADING
from cairn.runtime import MemorySession, SessionOptions
from cairn.runtime.release import Release
from cairn.testing import HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-1", actor_id="tg:42")
EMBEDDER = HashingEmbedder()


def _remember(stores: Stores, *facts: str, kind: SourceKind = SourceKind.USER) -> list[str]:
    records = []
    for fact in facts:
        (row,) = EMBEDDER.embed([fact])
        records.append(
            NewRecord(
                namespace="/facts/tg:42/",
                content=fact,
                confidence=0.9,
                sources=(Source(kind=kind),),
                vector=Vector(embedder=EMBEDDER.identity, values=tuple(float(x) for x in row)),
            )
        )
    written = stores.records.apply(SCOPE, [Create(record=r) for r in records])
    return [v.record_id for v in written]


@pytest.fixture
def stores() -> Stores:
    return InMemoryBackend(FixedClock()).stores()


def _session(stores: Stores, **options: object) -> MemorySession:
    return MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=EMBEDDER,
        options=SessionOptions.model_validate(options),
    )


def test_the_block_is_fixed_for_the_run_even_when_the_run_learns(stores: Stores) -> None:
    # Inferred earlier, so the model's memory_edit may revise it (never a user statement).
    (oat,) = _remember(stores, "The user drinks oat milk flat whites.", kind=SourceKind.MODEL)
    session = _session(stores)
    # The lesson repeats the untrusted record's words, so the host releases it (the release
    # itself is tested in test_runtime_release.py).
    run = session.start_run("what milk does the user drink?", release=lambda _: Release("host"))
    before = run.block
    assert oat in before

    learned = run.tools.call("learn", {"lesson": "The user drinks oat milk, never dairy milk."})
    edited = run.tools.call(
        "memory_edit", {"action": "update", "record_id": oat, "content": "The user drinks soy."}
    )
    assert learned.ok
    assert edited.ok
    assert run.block == before  # byte-identical: the prompt prefix is stable for the run

    later = session.start_run("what milk does the user drink?")
    assert later.block != before
    assert learned.content["record_id"] in later.block
    assert "soy" in later.block


def test_the_block_is_journaled_and_replays_byte_for_byte(stores: Stores) -> None:
    _remember(stores, "The user's office is in Lisbon.")
    run = _session(stores).start_run("where is the user's office?")
    assert run.journal_id is not None
    replayed = replay(SCOPE, run.journal_id, stores=stores)
    assert replayed.matches
    assert replayed.block == run.block


def test_a_run_with_nothing_to_recall_still_has_the_fixed_frame(stores: Stores) -> None:
    run = _session(stores).start_run("   ")
    assert run.block.splitlines()[:2] == [HEADING, CAVEAT]
    assert run.system_prompt("Be brief.") == f"Be brief.\n\n{run.block}"


def test_per_turn_recall_is_off_unless_asked_for(stores: Stores) -> None:
    _remember(stores, "The user is allergic to peanuts.")
    run = _session(stores).start_run("hello")
    assert run.turn_context("is the user allergic to peanuts?") is None


def test_a_turn_injects_only_relevant_memories_the_boot_block_did_not_show(
    stores: Stores,
) -> None:
    oat, peanuts = _remember(
        stores, "The user drinks oat milk flat whites.", "The user is allergic to peanuts."
    )
    run = _session(stores, per_turn_recall=True).start_run("oat milk flat whites")
    assert oat in run.block
    assert peanuts not in run.block

    injected = run.turn_context("is the user allergic to peanuts? oat milk flat whites")
    assert injected is not None
    assert peanuts in injected
    assert oat not in injected  # already in the boot window
    assert injected.splitlines()[:2] == [HEADING, CAVEAT]

    # Shown once, never again in this run.
    assert run.turn_context("allergic to peanuts") is None


def test_a_generic_message_injects_nothing_and_journals_nothing(stores: Stores) -> None:
    _remember(stores, "The user drinks oat milk flat whites.", "The user is allergic to peanuts.")
    run = _session(stores, per_turn_recall=True).start_run("good morning")
    assert run.turn_context("ok, thanks!") is None
    assert run.turn_context("sounds good") is None
    assert run.injections == []


def test_every_injection_is_journaled_and_replays_to_exactly_what_was_injected(
    stores: Stores,
) -> None:
    _remember(stores, "The user is allergic to peanuts.", "The user's office is in Lisbon.")
    run = _session(stores, per_turn_recall=True).start_run("good morning")
    first = run.turn_context("is the user allergic to peanuts?")
    second = run.turn_context("where is the user's office, Lisbon?")
    assert first is not None
    assert second is not None
    assert len(run.injections) == 2
    for journal_id, injected in zip(run.injections, (first, second), strict=True):
        replayed = replay(SCOPE, journal_id, stores=stores)
        assert replayed.matches
        assert replayed.block == injected
        assert replayed.journal.filters["injection"] == "turn"


def test_the_relevance_threshold_is_the_host_s_to_set(stores: Stores) -> None:
    _remember(stores, "The user is allergic to peanuts.")
    said = "is the user allergic to peanuts? oat milk flat whites"  # cosine ~0.78
    lenient = _session(stores, per_turn_recall=True, turn_min_evidence=0.5).start_run("hi")
    strict = _session(stores, per_turn_recall=True, turn_min_evidence=0.9).start_run("hi")
    assert lenient.turn_context(said) is not None
    assert strict.turn_context(said) is None


def test_a_runs_turn_keeps_who_said_it_in_a_group(stores: Stores) -> None:
    from cairn.models import SPEAKER_METADATA_KEY

    session = _session(stores)
    run = session.start_run("hello all")
    run.add_turn("USER", "I am vegetarian.", speaker="tg:111")
    run.add_turn("ASSISTANT", "Noted.")
    session.flush()
    events = stores.events.list_events(SCOPE, "s1").items
    assert [e.metadata for e in events] == [{SPEAKER_METADATA_KEY: "tg:111"}, {}]
