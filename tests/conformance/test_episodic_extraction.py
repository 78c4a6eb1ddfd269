"""The episodic strategy on every backend: episodes per session segment, reflections across
them, provenance and trust, at most once per rollout, and erasure that leaves no byte of
either (the SQLite file and WAL, every DynamoDB item on moto)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.errors import InvalidInputError
from cairn.extract.extractor import ExtractionOutcome, extract_rollout
from cairn.local import offline_model
from cairn.memories import StrategyKind
from cairn.models import RecordVersion, Role, Scope, SourceKind, Trust
from cairn.ports import ModelProvider, Stores
from cairn.testing import HashingEmbedder, ScriptedModel
from tests.conformance.test_erase_races import stored_bytes
from tests.unit.extraction_inputs import ACTOR, MEMORY_ID, T0, memory, message, rollout, strategy

SCOPE = Scope(memory_id=MEMORY_ID, actor_id=ACTOR)
NEIGHBOUR = Scope(memory_id=MEMORY_ID, actor_id="tg:99999")
EPISODES = "episodes-AbCdEf1234"
EPISODIC = memory(
    strategy(
        EPISODES,
        StrategyKind.EPISODIC,
        "/episodes/{actorId}/{sessionId}/",
        reflection_template="/episodes/{actorId}/",
    )
)
# Distinctive ASCII: it cannot occur in a file or an item by accident.
SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password
KEPT = "Plays-Ukulele-On-Thursdays-5127"
SEATTLE = (
    "I work on distributed systems at a startup in Seattle. Can you find a sushi place "
    "near Pike Place for Friday?",
    "Umi Sake House on 1st Ave takes bookings for Friday.",
    "Perfect, book it for two at 7pm.",
    "Booked: a table for two at 7pm on Friday.",
)
PIXEL = (
    "Remember this: my dog Pixel hates the rain. Find a sushi place that allows dogs?",
    "Tamari Bar in Capitol Hill has a dog-friendly patio.",
    "Thanks, that worked.",
)


def _extract(
    stores: Stores,
    texts: tuple[str, ...],
    model: ModelProvider,
    *,
    session: str,
    rollout_id: str,
    actor: str = ACTOR,
) -> ExtractionOutcome:
    roles = (Role.USER, Role.ASSISTANT)
    messages = [message(n + 1, text, role=roles[n % 2]) for n, text in enumerate(texts)]
    payload = rollout(
        *messages, rollout_id=rollout_id, session_id=session, strategy_ids=(EPISODES,)
    ).model_copy(update={"actor_id": actor})
    outcome = extract_rollout(
        payload,
        EPISODIC,
        stores=stores,
        model=model,
        embedder=HashingEmbedder(),
        clock=FixedClock(T0 + timedelta(hours=2)),
    )
    assert outcome.done, outcome.reason
    return outcome


def _live(stores: Stores, category: str, scope: Scope = SCOPE) -> list[RecordVersion]:
    listed = stores.records.list_records(scope, namespace_prefix=f"/episodes/{scope.actor_id}/")
    return sorted((v for v in listed.items if v.category == category), key=lambda v: v.namespace)


def test_the_offline_model_files_an_episode_per_session_and_a_reflection_across_them(
    stores: Stores,
) -> None:
    model = offline_model()
    first = _extract(stores, SEATTLE, model, session="s1", rollout_id="ro-1")
    assert (first.counts.created, first.counts.reflections) == (1, 0)  # one episode: too few
    second = _extract(stores, PIXEL, model, session="s2", rollout_id="ro-2")
    assert (second.counts.created, second.counts.reflections) == (1, 1)

    seattle, pixel = _live(stores, "episode")
    assert seattle.namespace == f"/episodes/{ACTOR}/s1/"
    assert seattle.content.startswith(
        "Situation: The user works on distributed systems at a startup in Seattle. Intent: "
        "The user asked: Can you find a sushi place near Pike Place for Friday? Actions: The "
        "assistant replied: Umi Sake House"
    )
    assert "Outcome: The assistant ended with: Booked: a table for two at 7pm on Friday." in (
        seattle.content
    )
    assert "Situation: The user's dog Pixel hates the rain." in pixel.content
    assert "Intent: The user asked to find a sushi place that allows dogs." in pixel.content
    (reflection,) = _live(stores, "reflection")
    assert reflection.namespace == f"/episodes/{ACTOR}/"
    assert reflection.content.startswith("Across 2 episodes the user returned to: ")
    assert "sushi (2)" in reflection.content
    assert reflection.trust is Trust.UNTRUSTED
    cited = {(s.kind, s.event_id, s.session_id, s.speaker) for s in reflection.sources}
    assert {(s.kind, s.event_id, s.session_id, s.speaker) for s in seattle.sources} <= cited
    assert {(s.kind, s.event_id, s.session_id, s.speaker) for s in pixel.sources} <= cited
    # Only this pass's own source names a rollout: the one whose extraction wrote it.
    (own,) = [s for s in reflection.sources if s.rollout_id is not None]
    assert (own.kind, own.rollout_id, own.event_id) == (SourceKind.MODEL, "ro-2", None)
    assert {v.trust for v in (seattle, pixel)} == {Trust.UNTRUSTED}


def test_a_scripted_reflection_replaces_the_kept_one_and_a_redelivery_calls_no_model(
    stores: Stores,
) -> None:
    def episode(situation: str, evidence: list[int]) -> str:
        told = {"situation": situation, "intent": "Book dinner.", "actions": ["Searched."]}
        return json.dumps({"candidates": [{**told, "outcome": "Booked.", "evidence": evidence}]})

    model = ScriptedModel(
        [
            episode("The user is in Seattle.", [1, 2]),
            episode("The user is in Porto.", [1]),
            json.dumps({"candidates": [{"content": "The user books ahead.", "evidence": [1, 2]}]}),
            episode("The user is in Oslo.", [2]),
            json.dumps(
                {
                    "candidates": [
                        {
                            "content": "The user always books dinner.",
                            "evidence": [2, 3],
                            "replaces": 1,
                        }
                    ]
                }
            ),
        ]
    )
    _extract(stores, SEATTLE[:2], model, session="s1", rollout_id="ro-1")
    _extract(stores, PIXEL[:2], model, session="s2", rollout_id="ro-2")
    (first,) = _live(stores, "reflection")
    _extract(stores, SEATTLE[2:], model, session="s3", rollout_id="ro-3")

    (kept,) = _live(stores, "reflection")
    assert (kept.record_id, kept.version, kept.content) == (
        first.record_id,
        2,
        "The user always books dinner.",
    )
    assert set(first.sources) <= set(kept.sources)  # sources only grow: trust never rises
    shown = model.requests[-1].messages[0].text
    assert '"reflections":[{"alias":1,"content":"The user books ahead."}]' in shown
    assert model.remaining == 0

    again = _extract(stores, SEATTLE[2:], ScriptedModel(), session="s3", rollout_id="ro-3")
    assert again.status == "already_applied"
    assert len(_live(stores, "episode")) == 3


def test_erasing_the_actor_leaves_no_byte_of_its_episodes_or_reflections(
    backend_name: str, stores: Stores, tmp_path: Path
) -> None:
    model = offline_model()
    hobby = (f"My hobby: {KEPT}.", "Nice.")
    _extract(stores, hobby, model, session="n1", rollout_id="ro-n1", actor=NEIGHBOUR.actor_id)
    _extract(stores, (f"My passport is {SECRET}.", "Noted."), model, session="s1", rollout_id="r1")
    _extract(stores, (f"Is {SECRET} valid?", "Yes."), model, session="s2", rollout_id="r2")
    (reflection,) = _live(stores, "reflection")
    assert SECRET in reflection.content
    assert all(SECRET in v.content for v in _live(stores, "episode"))

    erase_actor(stores, SCOPE, staging=None)

    assert stores.records.list_records(SCOPE, include_inactive=True).items == ()
    assert _live(stores, "episode", NEIGHBOUR)  # the other actor's episode stays
    if backend_name == "memory":
        pytest.skip("the in-memory backend keeps no bytes to scan")
    everything = stored_bytes(backend_name, tmp_path)
    assert SECRET.encode() not in everything
    assert KEPT.encode() in everything  # the scan reads what is really stored


def test_the_same_episode_told_twice_is_two_episodes_never_folded_into_one(
    stores: Stores,
) -> None:
    told = {
        "situation": "The user is hungry.",
        "intent": "Find dinner.",
        "actions": ["Searched nearby."],
        "outcome": "Booked a table.",
        "evidence": [1],
    }
    episode = json.dumps({"candidates": [told]})
    reflection = json.dumps({"candidates": []})
    model = ScriptedModel([episode, episode, reflection])

    _extract(stores, PIXEL[:1], model, session="s1", rollout_id="ro-1")
    _extract(stores, PIXEL[:1], model, session="s1", rollout_id="ro-2")

    first, second = _live(stores, "episode")
    assert first.content == second.content
    assert first.record_id != second.record_id
    assert model.remaining == 0


def test_an_actor_whose_reflections_would_sit_in_another_s_episodes_is_refused_first(
    stores: Stores,
) -> None:
    # "tg:12345/s1"'s reflections would go to /episodes/tg:12345/s1/, actor tg:12345's
    # episode namespace for session s1: refused before any model call or write.
    with pytest.raises(InvalidInputError, match="whole namespace of actor 'tg:12345'"):
        _extract(stores, PIXEL, ScriptedModel(), session="s2", rollout_id="r1", actor=f"{ACTOR}/s1")

    assert (
        stores.records.list_records(Scope(memory_id=MEMORY_ID, actor_id=f"{ACTOR}/s1")).items == ()
    )
