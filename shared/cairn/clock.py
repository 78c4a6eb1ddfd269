"""Clocks: the system clock for real use, a settable one for tests (``cairn.testing``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that moves only when told to: ``advance`` or ``set``. Never goes backwards."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = (start or datetime(2026, 1, 1, tzinfo=UTC)).astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        """Move forward by ``delta`` (or ``timedelta(**kwargs)``); returns the new time."""
        step = delta if delta is not None else timedelta(**kwargs)
        if step < timedelta(0):
            raise ValueError("FixedClock never goes backwards; use a new clock")
        self._now += step
        return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when``, which must not be earlier than now."""
        if when.tzinfo is None:
            raise ValueError("FixedClock.set needs a timezone-aware datetime")
        if when < self._now:
            raise ValueError("FixedClock never goes backwards; use a new clock")
        self._now = when.astimezone(UTC)
