"""The staged payload (``cairn.rollout/1``) and how a claim becomes one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cairn.errors import InvalidInputError
from cairn.extract.staging import build_payload
from cairn.models import BlobPayload, Conversational, Event, Role
from cairn.rollout.index import EventRef, Rollout
from cairn.rollout.payload import (
    RolloutMessage,
    RolloutNotice,
    decode_notice,
    decode_payload,
    encode_notice,
    encode_payload,
    text_sha256,
)

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def event(n: int, *texts: str, at: datetime | None = None, blob: bool = False) -> Event:
    payload: list[Conversational | BlobPayload] = [
        Conversational(role=Role.USER, text=text) for text in texts
    ]
    if blob:
        payload.insert(0, BlobPayload(blob={"tool": "weather", "n": n}))
    return Event(
        session_id="s1",
        event_timestamp=at or T0 + timedelta(seconds=n),
        payload=tuple(payload),
        memory_id="m1",
        actor_id="tg:1",
        event_id=f"{1767258000000 + n}#{n:016x}",
        created_at=T0 + timedelta(seconds=n),
    )


def ref(e: Event) -> EventRef:
    return EventRef.model_validate(e, from_attributes=True)


def claim(batch: list[Event], history: list[Event], window: int) -> Rollout:
    return Rollout(
        rollout_id="ro-20260101T090000000000-abcdefabcdef",
        memory_id="m1",
        actor_id="tg:1",
        session_id="s1",
        strategy_ids=("facts-AbCdEf1234",),
        trigger="message_count",
        events=tuple(ref(e) for e in batch),
        history=tuple(ref(e) for e in history),
        history_window=window,
        claimed_at=T0,
        updated_at=T0,
    )


def test_the_payload_holds_every_message_in_session_order_with_its_digest() -> None:
    late, early = event(2, "I moved to Lisbon"), event(1, "Hello", "Second message")
    payload = build_payload(claim([late, early], [], 0), [late, early], [])

    assert payload is not None
    assert [(m.event_id, m.index, m.text) for m in payload.events] == [
        (early.event_id, 0, "Hello"),
        (early.event_id, 1, "Second message"),
        (late.event_id, 0, "I moved to Lisbon"),
    ]
    assert all(m.sha256 == text_sha256(m.text) for m in payload.events)
    assert payload.created_at == T0  # the claim time: a rebuilt payload is byte-identical


def test_blobs_are_not_staged_and_their_position_is_kept_for_the_messages() -> None:
    mixed = event(1, "Weather in Porto?", blob=True)
    payload = build_payload(claim([mixed], [], 0), [mixed], [])

    assert payload is not None
    assert [(m.index, m.text) for m in payload.events] == [(1, "Weather in Porto?")]


def test_history_is_trimmed_to_the_last_messages_of_the_window() -> None:
    older = [event(1, "one", "two"), event(2, "three"), event(3, "four", "five")]
    batch = [event(4, "six")]
    payload = build_payload(claim(batch, older, 3), batch, older)

    assert payload is not None
    assert [m.text for m in payload.history] == ["three", "four", "five"]
    assert [m.text for m in payload.events] == ["six"]


def test_a_batch_whose_events_were_all_deleted_has_no_payload() -> None:
    gone = event(1, "deleted before staging")

    assert build_payload(claim([gone], [], 0), [], []) is None


def test_encoding_is_canonical_and_decodes_to_the_same_payload() -> None:
    batch = [event(1, "Prefers tea ☕")]
    payload = build_payload(claim(batch, [], 0), batch, [])
    assert payload is not None

    encoded = encode_payload(payload)

    assert encoded == encode_payload(decode_payload(encoded))
    assert decode_payload(encoded) == payload
    assert b'"schema":"cairn.rollout/1"' in encoded
    assert "☕".encode() in encoded  # UTF-8, not \\u escapes


def test_a_message_whose_digest_does_not_match_its_text_is_refused() -> None:
    with pytest.raises(ValueError, match="sha256"):
        RolloutMessage(
            event_id="1#a",
            index=0,
            event_timestamp=T0,
            role=Role.USER,
            text="I moved to Lisbon",
            sha256=text_sha256("I moved to Porto"),
        )


@pytest.mark.parametrize(
    "document",
    [b"not json", b'{"schema": "cairn.rollout/2"}', b"{}"],
    ids=["not-json", "unknown-schema", "empty"],
)
def test_anything_but_a_rollout_payload_is_refused_with_what_to_do(document: bytes) -> None:
    with pytest.raises(InvalidInputError, match=r"cairn\.rollout/1"):
        decode_payload(document)


def test_a_notice_round_trips_and_names_no_content() -> None:
    notice = RolloutNotice(
        memory_id="m1", actor_id="tg:1", rollout_id="ro-1", staging_key="rollouts/abc/ro-1"
    )
    body = encode_notice(notice)

    assert decode_notice(body) == notice
    assert set(json.loads(body)) == {
        "schema",
        "memory_id",
        "actor_id",
        "rollout_id",
        "staging_key",
    }
    with pytest.raises(InvalidInputError):
        decode_notice('{"rollout_id": "ro-1"}')
