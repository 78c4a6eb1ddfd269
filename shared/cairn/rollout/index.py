"""The rollout index contract: session counters, trigger policies, rollouts and their states.

Every ``RolloutStore`` backend keeps the same two kinds of rows and moves them only through the
pure planners below (as record writes go through ``cairn.versioning``), so they cannot drift:

- ``SessionCounters``, one per session: messages and estimated tokens appended since the last
  rollout, the pending events, the last few released events (the history window), and when
  the session turns idle. ``count_append`` moves it for one appended event and, when a count
  trigger fires, claims a rollout in the same step; ``claim_idle_session`` does so for a
  session idle past its timeout, and ``claim_closed_session`` for a session its agent closed.
- ``Rollout``, one per released batch, moving ``claimed -> staged -> announced -> consumed``
  (or ``failed`` with a reason) through ``advance``. Transitions are idempotent: repeating one,
  or asking for one the rollout is already past, changes nothing.

Only conversational payloads are messages (``messages_of``); tokens are estimated by
``estimate_tokens``, a pure stand-in for a tokenizer.

Two kinds of rollout share the index. ``extraction`` rollouts are released by the counters
above. ``evidence`` rollouts hold what a completed agent run left (``cairn.consolidate.evidence``):
staged directly (``RolloutStore.add_staged``), consumed by a consolidation pass inside its
``RecordStore.apply`` (``cairn.rollout.consumption``). An evidence rollout's id begins with ``ev-``
(``new_evidence_id``), so every backend lists a kind with one key range, and the notifier can
route a notice by its id alone (``rollout_kind``).

Longer than 300 lines because the counters and the rollout states are moved by the same
pure planners (``count_append`` claims a rollout while it moves the counters); keeping them in one
module keeps every backend's two kinds of rows under one reading.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from cairn.errors import ConflictError
from cairn.models import (
    ActorId,
    Conversational,
    Event,
    Frozen,
    Label,
    MemoryId,
    Scope,
    SessionId,
    UtcDatetime,
)

# A rollout never holds more events than this, whatever the triggers (a session with only an
# idle trigger would otherwise grow one unbounded payload and one unbounded counter item).
MAX_BATCH_EVENTS = 100
# A claimed or staged rollout not announced within this long is picked up by the sweep: the
# process that claimed it normally stages and announces it within a second.
STALL_AFTER = timedelta(seconds=60)
# An announced rollout not consumed within this long is announced again (past SNS FIFO's
# five-minute deduplication window, so the new message is delivered) ...
REDELIVER_AFTER = timedelta(minutes=15)
# ... at most this many times in all; then it is marked failed, with the reason, for an operator.
MAX_ANNOUNCEMENTS = 3

Trigger = Literal[
    "message_count", "token_count", "idle_timeout", "batch_limit", "session_closed", "run_completed"
]
NewId = Callable[[datetime], str]
RolloutKind = Literal["extraction", "evidence"]
# Reserved for evidence rollouts: an extraction rollout id never begins with it.
EVIDENCE_ID_PREFIX = "ev-"


def new_rollout_id(at: datetime) -> str:
    """``ro-<claim time, UTC, to the microsecond>-<12 hex>``: sorts by claim time, and is a
    single safe path segment (``cairn.rollout.staging_keys.ROLLOUT_ID_PATTERN``)."""
    return f"ro-{at.strftime('%Y%m%dT%H%M%S%f')}-{secrets.token_hex(6)}"


def new_evidence_id(at: datetime) -> str:
    """``ev-<completion time, UTC, to the microsecond>-<12 hex>``: an evidence rollout's id."""
    return f"{EVIDENCE_ID_PREFIX}{at.strftime('%Y%m%dT%H%M%S%f')}-{secrets.token_hex(6)}"


def rollout_kind(rollout_id: str) -> RolloutKind:
    """``evidence`` for an id made by ``new_evidence_id`` (``ev-`` prefix), else ``extraction``."""
    return "evidence" if rollout_id.startswith(EVIDENCE_ID_PREFIX) else "extraction"


def estimate_tokens(text: str) -> int:
    """ceil(UTF-8 bytes / 4): about one token per four bytes of English, never zero for text."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def messages_of(event: Event) -> list[tuple[int, Conversational]]:
    """The event's conversational payloads with their positions; blobs are not messages."""
    return [(i, p) for i, p in enumerate(event.payload) if isinstance(p, Conversational)]


class EventRef(Frozen):
    """Names one event of a session; the timestamp lets a backend find it by its sort key."""

    event_id: Label
    event_timestamp: UtcDatetime


class TriggerPolicy(Frozen):
    """When a session's uncounted messages are released: whichever set condition is met first.

    Ranges are AgentCore's. ``strategy_ids`` are the strategies the released rollouts are for.
    """

    message_count: int | None = Field(default=None, ge=1, le=50)
    token_count: int | None = Field(default=None, ge=100, le=500_000)
    idle_timeout_seconds: int | None = Field(default=None, ge=10, le=3000)
    history_window: int = Field(default=0, ge=0, le=50)
    strategy_ids: tuple[Label, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_is_set(self) -> Self:
        if (self.message_count, self.token_count, self.idle_timeout_seconds) == (None,) * 3:
            raise ValueError("set at least one trigger condition (message, token or idle time)")
        return self


class SessionCounters(Frozen):
    """A session's progress toward its next rollout; ``version`` grows with every write."""

    memory_id: MemoryId
    actor_id: ActorId
    session_id: SessionId
    messages: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    pending: tuple[EventRef, ...] = Field(default=(), max_length=MAX_BATCH_EVENTS)
    recent: tuple[EventRef, ...] = Field(default=(), max_length=50)
    last_event_at: UtcDatetime | None = None
    idle_due_at: UtcDatetime | None = None
    policy: TriggerPolicy | None = None
    version: int = Field(default=0, ge=0)

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)


class RolloutState(StrEnum):
    CLAIMED = "claimed"  # the batch is fixed; nothing staged yet
    STAGED = "staged"  # the payload is in the staging store
    ANNOUNCED = "announced"  # a notification was published
    CONSUMED = "consumed"  # an extractor wrote its records
    FAILED = "failed"  # given up, with a reason; still listed as pending


class Rollout(Frozen):
    """One released batch of a session's events, and how far it got.

    ``history`` names the events released just before this batch (the historical window, at
    most ``history_window`` messages of them are staged). No field holds message content.
    An ``evidence`` rollout (``kind``) names no events nor strategies: its payload carries the
    run's bounded transcript itself, and its trigger is ``run_completed``.
    """

    rollout_id: Label
    memory_id: MemoryId
    actor_id: ActorId
    session_id: SessionId
    strategy_ids: tuple[Label, ...] = ()
    trigger: Trigger
    events: tuple[EventRef, ...] = Field(default=(), max_length=MAX_BATCH_EVENTS)
    history: tuple[EventRef, ...] = Field(default=(), max_length=50)
    history_window: int = Field(default=0, ge=0, le=50)
    state: RolloutState = RolloutState.CLAIMED
    claimed_at: UtcDatetime
    updated_at: UtcDatetime
    staging_key: Annotated[str, Field(min_length=1, max_length=1024)] | None = None
    announcements: int = Field(default=0, ge=0)
    failure: Annotated[str, Field(max_length=1000)] | None = None

    @model_validator(mode="after")
    def _shaped_for_its_kind(self) -> Self:
        if self.kind == "evidence":
            if self.trigger != "run_completed" or self.events or self.strategy_ids:
                raise ValueError(
                    "an evidence rollout (id ev-...) is triggered by run_completed and names "
                    "no events or strategies"
                )
        elif not self.events or not self.strategy_ids or self.trigger == "run_completed":
            raise ValueError(
                "an extraction rollout names at least one event and one strategy, and a "
                "count, token, idle or batch trigger"
            )
        return self

    @property
    def kind(self) -> RolloutKind:
        return rollout_kind(self.rollout_id)

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)

    @property
    def pending(self) -> bool:
        """Not consumed: its events still wait for records (``failed`` ones included)."""
        return self.state is not RolloutState.CONSUMED


class Appended(Frozen):
    """An appended event and the rollout its append claimed, if a count trigger fired.

    ``idle_due_at`` is the session's idle deadline when this event started its pending batch
    (the session had nothing pending before it): the moment the sweep first has something to
    wait for in the session. Later events of the batch move the deadline, and the sweep that
    wakes at the first one re-arms for the next (``cairn.extract.sweep``)."""

    event: Event
    claim: Rollout | None = None
    idle_due_at: UtcDatetime | None = None


def appended(
    event: Event,
    before: SessionCounters | None,
    after: SessionCounters | None,
    claim: Rollout | None,
) -> Appended:
    """What an append returns, from the session's counters before and after it."""
    started = after is not None and bool(after.pending) and not (before and before.pending)
    return Appended(
        event=event, claim=claim, idle_due_at=after.idle_due_at if started and after else None
    )


# --- pure planners ------------------------------------------------------------------------


def count_append(
    counters: SessionCounters | None,
    event: Event,
    policy: TriggerPolicy,
    *,
    new_id: NewId = new_rollout_id,
) -> tuple[SessionCounters, Rollout | None] | None:
    """The session's counters after ``event`` (appended at ``event.created_at``), and the
    rollout claimed if a trigger fired; ``None`` when the event holds no message (no change)."""
    messages = messages_of(event)
    if not messages:
        return None
    now = event.created_at
    before = counters or SessionCounters(
        memory_id=event.memory_id, actor_id=event.actor_id, session_id=event.session_id
    )
    idle = policy.idle_timeout_seconds
    after = before.model_copy(
        update={
            "messages": before.messages + len(messages),
            "tokens": before.tokens + sum(estimate_tokens(m.text) for _, m in messages),
            "pending": (*before.pending, EventRef.model_validate(event, from_attributes=True)),
            "last_event_at": now,
            "idle_due_at": now + timedelta(seconds=idle) if idle is not None else None,
            "policy": policy,
            "version": before.version + 1,
        }
    )
    trigger = _count_trigger(after, policy)
    if trigger is None:
        return after, None
    return _release(after, policy, trigger, now, new_id)


def _count_trigger(counters: SessionCounters, policy: TriggerPolicy) -> Trigger | None:
    if policy.message_count is not None and counters.messages >= policy.message_count:
        return "message_count"
    if policy.token_count is not None and counters.tokens >= policy.token_count:
        return "token_count"
    if len(counters.pending) >= MAX_BATCH_EVENTS:
        return "batch_limit"
    return None


def claim_idle_session(
    counters: SessionCounters, now: datetime, *, new_id: NewId = new_rollout_id
) -> tuple[SessionCounters, Rollout] | None:
    """The counters reset and the rollout claimed for a session idle past its timeout at
    ``now``; ``None`` if it has nothing pending or is not idle yet."""
    due = counters.idle_due_at
    if not counters.pending or counters.policy is None or due is None or due > now:
        return None
    after = counters.model_copy(update={"version": counters.version + 1})
    return _release(after, counters.policy, "idle_timeout", now, new_id)


def claim_closed_session(
    counters: SessionCounters, now: datetime, *, new_id: NewId = new_rollout_id
) -> tuple[SessionCounters, Rollout] | None:
    """The counters reset and the rollout claimed for a session its agent closed at ``now``,
    whatever its triggers; ``None`` if it has nothing pending (or was never counted)."""
    if not counters.pending or counters.policy is None:
        return None
    after = counters.model_copy(update={"version": counters.version + 1})
    return _release(after, counters.policy, "session_closed", now, new_id)


def _release(
    counters: SessionCounters, policy: TriggerPolicy, trigger: Trigger, now: datetime, new_id: NewId
) -> tuple[SessionCounters, Rollout]:
    window = policy.history_window
    claim = Rollout(
        rollout_id=new_id(now),
        memory_id=counters.memory_id,
        actor_id=counters.actor_id,
        session_id=counters.session_id,
        strategy_ids=policy.strategy_ids,
        trigger=trigger,
        events=counters.pending,
        history=counters.recent[-window:] if window else (),
        history_window=window,
        claimed_at=now,
        updated_at=now,
    )
    recent = (*counters.recent, *counters.pending)[-window:] if window else ()
    reset = counters.model_copy(
        update={"messages": 0, "tokens": 0, "pending": (), "recent": recent, "idle_due_at": None}
    )
    return reset, claim


def advance(
    rollout: Rollout,
    target: RolloutState,
    now: datetime,
    *,
    staging_key: str | None = None,
    reason: str | None = None,
) -> Rollout | None:
    """``rollout`` moved to ``target`` at ``now``; ``None`` when that changes nothing (it is
    there or past it already). ``ConflictError`` for a step it cannot take yet (announcing or
    consuming a rollout that was never staged). ``claimed`` is reached again only from
    ``failed``: a retry (StartMemoryExtractionJob), with the failure and announcements reset."""
    state = rollout.state
    if state is RolloutState.CONSUMED or (state is target and target is not RolloutState.ANNOUNCED):
        return None
    if target is RolloutState.CLAIMED:
        if state is not RolloutState.FAILED:
            return None
        return rollout.model_copy(
            update={"state": target, "updated_at": now, "failure": None, "announcements": 0}
        )
    if state is RolloutState.FAILED and target is not RolloutState.CONSUMED:
        return None
    if target in (RolloutState.ANNOUNCED, RolloutState.CONSUMED) and state is RolloutState.CLAIMED:
        raise ConflictError(
            f"rollout {rollout.rollout_id!r} is not staged yet; stage its payload first"
        )
    update: dict[str, object] = {"state": target, "updated_at": now}
    if target is RolloutState.STAGED:
        if state is not RolloutState.CLAIMED:
            return None
        update["staging_key"] = staging_key
    elif target is RolloutState.ANNOUNCED:
        update["announcements"] = rollout.announcements + 1
    elif target is RolloutState.FAILED:
        update["failure"] = (reason or "failed without a recorded reason")[:1000]
    return rollout.model_copy(update=update)


def due_at(rollout: Rollout) -> datetime | None:
    """When the sweep should next look at ``rollout``; ``None`` once it needs nothing more."""
    if rollout.state in (RolloutState.CLAIMED, RolloutState.STAGED):
        return rollout.updated_at + STALL_AFTER
    if rollout.state is RolloutState.ANNOUNCED:
        return rollout.updated_at + REDELIVER_AFTER
    return None
