"""Counting a batch of appended events as their appends one by one would count them.

``RolloutStore.append_counted_batch`` appends a session's batch of turns in one transaction;
each backend reads the counters of the sessions the batch touches, plans the whole batch here
(``count_append`` of each event in order, each on the counters the one before left), then
writes the events, the final counters of each session and every rollout claimed on the way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cairn.models import Event
from cairn.rollout.index import (
    Appended,
    Rollout,
    SessionCounters,
    TriggerPolicy,
    appended,
    count_append,
)


@dataclass(frozen=True, slots=True)
class CountedBatch:
    """The batch's answers (aligned with its events), the sessions' counters after it (only
    those it changed) and the rollouts it claimed, in claim order."""

    answers: tuple[Appended, ...]
    counters: dict[str, SessionCounters]
    claims: tuple[Rollout, ...]


def count_batch(
    start: Mapping[str, SessionCounters | None],
    events: Sequence[Event],
    policy: TriggerPolicy | None,
) -> CountedBatch:
    """Plan ``events`` (appended in this order) over the sessions' counters ``start`` (by
    session id; every session of the batch is a key). Without a policy nothing is counted."""
    if policy is None:
        return CountedBatch(tuple(Appended(event=e) for e in events), {}, ())
    current = dict(start)
    changed: dict[str, SessionCounters] = {}
    claims: list[Rollout] = []
    answers: list[Appended] = []
    for event in events:
        before = current[event.session_id]
        counted = count_append(before, event, policy)
        if counted is None:
            answers.append(Appended(event=event))
            continue
        after, claim = counted
        current[event.session_id] = changed[event.session_id] = after
        if claim is not None:
            claims.append(claim)
        answers.append(appended(event, before, after, claim))
    return CountedBatch(tuple(answers), changed, tuple(claims))


def sessions_of(events: Sequence[Event]) -> list[str]:
    """The batch's session ids, each once, in first-appearance order."""
    return list(dict.fromkeys(e.session_id for e in events))
