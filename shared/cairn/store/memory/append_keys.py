"""Idempotency keys of appends, in memory: which event each key stored, for how long.

The reference reading of ``EventStore.append(..., idempotency_key=...)``: a key remembered in
its scope answers with the event it stored (``EventNotFoundError`` once that was deleted),
until ``APPEND_KEY_KEPT_FOR`` after the append.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from cairn.errors import EventNotFoundError
from cairn.models import Event, Scope
from cairn.ports import APPEND_KEY_KEPT_FOR, Clock

EventRows = dict[Scope, dict[str, dict[str, Event]]]


@dataclass(frozen=True, slots=True)
class _Keyed:
    session_id: str
    event_id: str
    expires_at: datetime


class AppendKeys:
    """Keys by scope; the caller holds the backend's lock around every call."""

    def __init__(self, events: EventRows, clock: Clock) -> None:
        self._events = events
        self._clock = clock
        self._keys: dict[Scope, dict[str, _Keyed]] = defaultdict(dict)

    def stored(self, scope: Scope, key: str | None) -> Event | None:
        """The event stored under ``key``; ``None`` if the key is new (or expired)."""
        if key is None:
            return None
        found = self._keys.get(scope, {}).get(key)
        if found is None or found.expires_at <= self._clock.now():
            return None
        event = self._events.get(scope, {}).get(found.session_id, {}).get(found.event_id)
        if event is None:
            raise EventNotFoundError(found.event_id)
        return event

    def remember(self, scope: Scope, key: str | None, event: Event) -> None:
        if key is not None:
            expires_at = event.created_at + APPEND_KEY_KEPT_FOR
            keyed = _Keyed(event.session_id, event.event_id, expires_at)
            self._keys[scope][key] = keyed

    def forget_scope(self, scope: Scope) -> None:
        self._keys.pop(scope, None)
