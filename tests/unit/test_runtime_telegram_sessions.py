"""Which session a Telegram message belongs to: a new one each local day or after an idle gap,
named by the day it began."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from cairn.telegram.sessions import SessionPolicy, next_chat_state

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_the_first_message_opens_a_session_named_by_its_day() -> None:
    state = next_chat_state(None, 42, T0, SessionPolicy())
    assert (state.actor_id, state.session_id, state.revision) == ("tg:42", "2026-03-01", 1)


def test_messages_of_one_day_stay_in_one_session() -> None:
    policy = SessionPolicy()
    first = next_chat_state(None, 42, T0, policy)
    later = next_chat_state(first, 42, T0 + timedelta(hours=3), policy)
    assert later.session_id == first.session_id
    assert later.started_at == first.started_at
    assert later.last_active_at == T0 + timedelta(hours=3)
    assert later.revision == 2


def test_the_next_day_opens_a_new_session() -> None:
    policy = SessionPolicy(idle_minutes=None)
    first = next_chat_state(None, 42, T0, policy)
    tomorrow = next_chat_state(first, 42, T0 + timedelta(days=1), policy)
    assert tomorrow.session_id == "2026-03-02"


def test_an_idle_gap_opens_a_numbered_session_the_same_day() -> None:
    policy = SessionPolicy(idle_minutes=60)
    first = next_chat_state(None, 42, T0, policy)
    second = next_chat_state(first, 42, T0 + timedelta(minutes=61), policy)
    third = next_chat_state(second, 42, T0 + timedelta(minutes=200), policy)
    assert [s.session_id for s in (first, second, third)] == [
        "2026-03-01",
        "2026-03-01-2",
        "2026-03-01-3",
    ]


def test_the_day_boundary_is_the_configured_timezone_s() -> None:
    late_evening_in_lisbon = datetime(2026, 7, 1, 22, 30, tzinfo=UTC)  # 23:30 in Lisbon
    past_midnight = late_evening_in_lisbon + timedelta(hours=1)  # 00:30 in Lisbon
    utc = SessionPolicy(idle_minutes=None)
    lisbon = SessionPolicy(idle_minutes=None, timezone="Europe/Lisbon")
    assert (
        next_chat_state(
            next_chat_state(None, 1, late_evening_in_lisbon, utc), 1, past_midnight, utc
        ).session_id
        == "2026-07-01"
    )
    lisbon_state = next_chat_state(None, 1, late_evening_in_lisbon, lisbon)
    assert next_chat_state(lisbon_state, 1, past_midnight, lisbon).session_id == "2026-07-02"


def test_group_chats_have_their_own_actor() -> None:
    assert next_chat_state(None, -100123, T0, SessionPolicy()).actor_id == "tg:-100123"


def test_an_unknown_timezone_is_refused_with_what_to_give() -> None:
    with pytest.raises(ValidationError, match="IANA name"):
        SessionPolicy(timezone="Mars/Olympus_Mons")
