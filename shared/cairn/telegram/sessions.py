"""Which session a chat's message belongs to: a new one each day, or after an idle gap (pure).

A chat is one actor, ``tg:<chat id>``. Its sessions are named by the local day they began, in
the policy's timezone (``2026-03-01``), with ``-2``, ``-3`` … for later sessions of the same day
(after an idle gap). ``ChatState`` is what is kept per chat; its ``revision`` lets the store
refuse a write based on a state another delivery has already moved.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from cairn.models import ActorId, Frozen, SessionId, UtcDatetime

_SUFFIX = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-(\d+))?$")


class SessionPolicy(Frozen):
    """When a chat starts a new session."""

    # A day is how people think of a conversation with an assistant ("yesterday we talked…").
    new_session_per_day: bool = True
    # Four hours of silence ends a conversation even within a day; None: never on idle alone.
    idle_minutes: int | None = Field(default=240, ge=1, le=60 * 24 * 30)
    # The day boundary's timezone (IANA name).
    timezone: str = "UTC"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            _zone(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown timezone {value!r}; give an IANA name such as Europe/Lisbon (a "
                "platform without timezone data needs the tzdata package)"
            ) from None
        return value

    def local_day(self, moment: datetime) -> str:
        return moment.astimezone(_zone(self.timezone)).date().isoformat()


def _zone(name: str) -> tzinfo:
    # UTC needs no timezone database (a Lambda image may ship none).
    return UTC if name == "UTC" else ZoneInfo(name)


class ChatState(Frozen):
    """A chat's actor, its current session, and when that session began and was last active."""

    chat_id: int
    actor_id: ActorId
    session_id: SessionId
    started_at: UtcDatetime
    last_active_at: UtcDatetime
    revision: int = Field(ge=1)


def actor_for_chat(chat_id: int) -> str:
    """The actor id of a chat: ``tg:<chat id>`` (group chats have negative ids)."""
    return f"tg:{chat_id}"


def starts_new_session(current: ChatState, now: datetime, policy: SessionPolicy) -> bool:
    """Whether a message at ``now`` begins a new session after ``current``."""
    if policy.new_session_per_day and policy.local_day(now) != policy.local_day(current.started_at):
        return True
    idle = policy.idle_minutes
    return idle is not None and now - current.last_active_at > timedelta(minutes=idle)


def next_chat_state(
    current: ChatState | None, chat_id: int, now: datetime, policy: SessionPolicy
) -> ChatState:
    """The chat's state once a message at ``now`` is taken in."""
    if current is not None and not starts_new_session(current, now, policy):
        return current.model_copy(
            update={
                "last_active_at": max(now, current.last_active_at),
                "revision": current.revision + 1,
            }
        )
    return ChatState(
        chat_id=chat_id,
        actor_id=actor_for_chat(chat_id),
        session_id=_session_name(policy.local_day(now), current),
        started_at=now,
        last_active_at=now,
        revision=current.revision + 1 if current is not None else 1,
    )


def _session_name(day: str, previous: ChatState | None) -> str:
    if previous is None or (found := _SUFFIX.match(previous.session_id)) is None:
        return day
    if found.group(1) != day:
        return day
    return f"{day}-{int(found.group(2) or 1) + 1}"
