"""When the deferred worker runs a pass, and for which scope: a pure scheduler, no threads.

``PassScheduler`` holds the scopes the worker admitted and answers, for a time ``now`` the
caller supplies, which passes start. Its rules (DESIGN §6):

- **Bounded admission**: at most ``capacity`` scopes are admitted at once, counting those whose
  pass is running; a notification beyond that is refused (``notify`` returns ``False``) and the
  evidence stays pending in the store, for a later notification or the sweep.
- **Concurrency**: at most ``min(4, capacity)`` passes run at once, never two on one scope.
- **Coalescing**: a scope becomes ready ``window`` (200 ms) after its first notification;
  notifications within that time join it. A notification never postpones a scope already
  queued: it keeps its place and its time.
- **Follow-ups**: a notification for a scope whose pass is running marks it; when the pass
  ends the scope is queued again, at once.
- **Full batches yield**: a pass that consumed a full batch (more evidence may wait) puts its
  scope at the back of the queue, behind the scopes already waiting, until the backlog drains.
- **One retry**: a pass that failed on its deadline (or a conflicting write) is queued again
  ``retry_after`` (5 s) later, once; a second failure waits for the next notification.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta

from cairn.errors import InvalidInputError
from cairn.models import Scope

MAX_CONCURRENT_PASSES = 4
COALESCING_WINDOW = timedelta(milliseconds=200)
RETRY_AFTER = timedelta(seconds=5)


class PassScheduler:
    """Admitted scopes, queued by the time they become ready, and the ones running."""

    def __init__(
        self,
        *,
        capacity: int,
        window: timedelta = COALESCING_WINDOW,
        retry_after: timedelta = RETRY_AFTER,
    ) -> None:
        if capacity < 1:
            raise InvalidInputError("a consolidation worker needs a capacity of at least 1 scope")
        self.capacity = capacity
        self.concurrency = min(MAX_CONCURRENT_PASSES, capacity)
        self._window = window
        self._retry_after = retry_after
        self._queued: OrderedDict[Scope, datetime] = OrderedDict()
        self._running: set[Scope] = set()
        self._follow_up: set[Scope] = set()
        self._retrying: set[Scope] = set()

    @property
    def admitted(self) -> int:
        """Scopes queued or running: what ``capacity`` bounds."""
        return len(self._queued) + len(self._running)

    @property
    def running(self) -> frozenset[Scope]:
        return frozenset(self._running)

    @property
    def queued(self) -> tuple[Scope, ...]:
        """Queued scopes, in queue order."""
        return tuple(self._queued)

    def retrying(self, scope: Scope) -> bool:
        """Whether ``scope``'s current work is its one retry."""
        return scope in self._retrying

    def notify(self, scope: Scope, now: datetime) -> bool:
        """Admit ``scope`` for a pass (or mark a follow-up); ``False`` when full."""
        if scope in self._running:
            self._follow_up.add(scope)
            return True
        if scope in self._queued:
            return True
        if self.admitted >= self.capacity:
            return False
        self._queued[scope] = now + self._window
        return True

    def take(self, now: datetime) -> list[Scope]:
        """The scopes whose pass starts now (in queue order), marked running."""
        started: list[Scope] = []
        for scope, ready_at in list(self._queued.items()):
            if len(self._running) >= self.concurrency:
                break
            if ready_at <= now:
                del self._queued[scope]
                self._running.add(scope)
                started.append(scope)
        return started

    def next_ready(self) -> datetime | None:
        """When the next queued scope becomes ready; ``None`` when nothing is queued or no pass
        could start anyway (every slot busy: a finishing pass wakes the worker)."""
        if not self._queued or len(self._running) >= self.concurrency:
            return None
        return min(self._queued.values())

    def finish(self, scope: Scope, now: datetime, *, more: bool, retry: bool) -> None:
        """The pass of ``scope`` ended: queue it again for a retry, a full batch or a
        follow-up, or let it go."""
        self._running.discard(scope)
        follow_up = scope in self._follow_up
        self._follow_up.discard(scope)
        if retry and scope not in self._retrying:
            self._retrying.add(scope)
            self._queued[scope] = now + self._retry_after
            return
        self._retrying.discard(scope)
        if more or follow_up:
            self._queued[scope] = now  # at the back: the scopes already waiting go first
