"""Staging and announcing rollouts: claimed -> payload in the staging store -> notice published.

``RolloutPipeline.append`` is how events enter extraction: the store appends and counts the
event in one transaction (``RolloutStore.append_counted``), and a claim that comes back is
released at once (``release``): its payload built from the claimed events and the history
window (``build_payload``), put in the staging store, marked staged, announced, marked
announced. Each step is idempotent, so a crash anywhere between them is finished by the sweep
(``cairn.extract.sweep``) and never stages a rollout twice: the payload key is derived from the
rollout id, a repeated put of a payload is a no-op, and a payload already staged by an earlier
attempt wins over a rebuilt one.

A failure to release never fails the append: the event is stored and counted (acknowledged),
the rollout stays claimed or staged, and the sweep releases it within ``STALL_AFTER``.

With a ``timer`` (the deployed stack's), an append that leaves the sweep something new to wait
for arms it: the idle deadline of a session whose pending batch the event started, and the due
time of the rollout it claimed (``due_at``: re-announce if never consumed, or finish if the
release stalled). An append that only moves a deadline arms nothing: the sweep woken by the
earlier deadline re-arms for the later one. A timer that cannot be armed never fails the append
either: the stack's hourly safety sweep finds what it would have woken for.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.errors import CairnError, RolloutConflictError
from cairn.models import SPEAKER_METADATA_KEY, Event, EventInput, Scope
from cairn.ports import Clock, Notifier, RolloutStore, StagingStore, SweepTimer
from cairn.rollout.index import (
    Appended,
    Rollout,
    RolloutState,
    TriggerPolicy,
    due_at,
    messages_of,
)
from cairn.rollout.payload import (
    RolloutMessage,
    RolloutNotice,
    RolloutPayload,
    encode_payload,
    text_sha256,
)
from cairn.rollout.staging_keys import staging_key

log = logging.getLogger(__name__)

EVERY_EVENT_DELETED = "every event of the batch was deleted before it could be staged"


def _session_order(events: Sequence[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.event_timestamp, e.event_id))


def _messages(events: Sequence[Event]) -> list[RolloutMessage]:
    return [
        RolloutMessage(
            event_id=event.event_id,
            index=index,
            event_timestamp=event.event_timestamp,
            role=message.role,
            text=message.text,
            sha256=text_sha256(message.text),
            speaker_id=event.metadata.get(SPEAKER_METADATA_KEY),
        )
        for event in _session_order(events)
        for index, message in messages_of(event)
    ]


def build_payload(
    rollout: Rollout, batch: Sequence[Event], history: Sequence[Event]
) -> RolloutPayload | None:
    """The payload of ``rollout`` from its batch and history events (any order); ``None`` if
    no message of the batch is left (its events were deleted before staging)."""
    messages = _messages(batch)
    if not messages:
        return None
    window = rollout.history_window
    earlier = _messages([e for e in history if e.event_id not in {m.event_id for m in messages}])
    return RolloutPayload(
        rollout_id=rollout.rollout_id,
        memory_id=rollout.memory_id,
        actor_id=rollout.actor_id,
        session_id=rollout.session_id,
        strategy_ids=rollout.strategy_ids,
        trigger=rollout.trigger,
        events=tuple(messages),
        history=tuple(earlier[-window:]) if window else (),
        created_at=rollout.claimed_at,
    )


@dataclass(frozen=True)
class RolloutPipeline:
    """The producer side of extraction: count events, stage and announce the rollouts."""

    rollouts: RolloutStore
    staging: StagingStore
    notifier: Notifier
    clock: Clock
    timer: SweepTimer | None = None

    def append(
        self,
        scope: Scope,
        event: EventInput,
        policy: TriggerPolicy | None,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Appended:
        """Append and count ``event``; release the rollout it claimed, if any; arm the sweep
        for what the append left due. The event is acknowledged once this returns, even if
        releasing or arming failed (the sweep retries the one, the safety sweep covers both).
        A repeat under ``idempotency_key`` returns the first event (``append_counted``)."""
        appended = self.rollouts.append_counted(
            scope,
            event,
            policy=policy,
            idempotency_key=idempotency_key,
            deletion_fence=deletion_fence,
        )
        wake = appended.idle_due_at
        if appended.claim is not None:
            released = self.release_quietly(appended.claim) or appended.claim
            wake = min((t for t in (wake, due_at(released)) if t is not None), default=None)
        if wake is not None:
            self.arm_quietly(wake)
        return appended

    def append_batch(
        self,
        scope: Scope,
        events: Sequence[EventInput],
        policy: TriggerPolicy | None,
        *,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> tuple[Appended, ...]:
        """``append`` of each event in order, all appended and counted in one transaction
        (``RolloutStore.append_counted_batch``); every rollout claimed is released, and the
        sweep armed for the earliest of what the batch left due."""
        answers = self.rollouts.append_counted_batch(
            scope, events, policy=policy, idempotency_keys=idempotency_keys
        )
        wakes = [a.idle_due_at for a in answers]
        for claim in (a.claim for a in answers if a.claim is not None):
            wakes.append(due_at(self.release_quietly(claim) or claim))
        wake = min((t for t in wakes if t is not None), default=None)
        if wake is not None:
            self.arm_quietly(wake)
        return answers

    def arm_quietly(self, at: datetime) -> bool:
        """Arm the timer (if any) for ``at``, logging instead of raising a ``CairnError``;
        whether a wake-up is armed."""
        if self.timer is None:
            return False
        try:
            self.timer.arm(at)
        except CairnError as exc:
            log.warning(
                "sweep not armed for %s (%s); the safety sweep will find it",
                at.isoformat(),
                type(exc).__name__,
            )
            return False
        return True

    def release_quietly(self, rollout: Rollout) -> Rollout | None:
        """``release``, logging instead of raising a ``CairnError``; ``None`` if it failed."""
        try:
            return self.release(rollout)
        except CairnError as exc:
            log.warning(
                "rollout %s not released yet (%s, retryable=%s); the sweep will retry it",
                rollout.rollout_id,
                type(exc).__name__,
                exc.retryable,
            )
            return None

    def release(self, rollout: Rollout) -> Rollout:
        """Take ``rollout`` as far as announced: stage it if claimed, announce it if staged
        (or again, if announced: a re-announcement). Returns it as stored afterwards."""
        if rollout.state is RolloutState.CLAIMED:
            rollout = self.stage(rollout)
        if rollout.state in (RolloutState.STAGED, RolloutState.ANNOUNCED):
            rollout = self.announce(rollout)
        return rollout

    def stage(self, rollout: Rollout) -> Rollout:
        """Write the payload (idempotent) and mark the rollout staged."""
        scope, now = rollout.scope, self.clock.now()
        batch = self.rollouts.events_for(scope, rollout.session_id, rollout.events)
        history = self.rollouts.events_for(scope, rollout.session_id, rollout.history)
        payload = build_payload(rollout, batch, history)
        if payload is None:
            return self.rollouts.mark(
                scope, rollout.rollout_id, RolloutState.FAILED, now=now, reason=EVERY_EVENT_DELETED
            )
        try:
            key = self.staging.put(scope, rollout.rollout_id, encode_payload(payload))
        except RolloutConflictError:
            # An earlier attempt staged it before an event was deleted: that payload stands.
            key = staging_key(scope, rollout.rollout_id)
        return self.rollouts.mark(
            scope, rollout.rollout_id, RolloutState.STAGED, now=now, staging_key=key
        )

    def announce(self, rollout: Rollout) -> Rollout:
        """Publish the notice and mark the rollout announced (once more, if it was)."""
        if rollout.staging_key is None:  # pragma: no cover - staged rollouts always have one
            raise RolloutConflictError(rollout.rollout_id)
        self.notifier.announce(
            RolloutNotice.of(rollout.scope, rollout.rollout_id, rollout.staging_key)
        )
        return self.rollouts.mark(
            rollout.scope, rollout.rollout_id, RolloutState.ANNOUNCED, now=self.clock.now()
        )
