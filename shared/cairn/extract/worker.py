"""The embedded extraction worker: the AWS pipeline's queue and Lambdas, in one thread.

``InProcessNotifier`` stands where the SNS topic does: an announcement puts the notice in the
worker's bounded queue, or, when the queue is full, fails like an unreachable topic would (the
rollout stays staged and the sweep announces it again). The worker thread takes notices one at
a time and runs ``cairn.extract.delivery.consume`` on each (the same call the extraction Lambda
makes), so there are never two extractions at once, let alone two on one scope; between
notices, at most every ``sweep_every`` by the injected clock, it runs the sweep.

A retryable failure (a model timeout) is tried once more after ``retry_after``; after that the
rollout stays announced for the sweep to announce again, like a message in a dead-letter queue.

Catching up (issue 14, item 3): the queue lives in memory, so at start-up every notice queued
by a process that died (or closed with a retry pending) is gone, and while the queue was full
new rollouts stayed staged. In both cases, whenever the queue is empty, the worker announces
again the extraction rollouts the index still holds as claimed or staged, or as announced
before this worker started -- due within ``REDELIVER_AFTER``, not only those already due --
``capacity`` at a time, each once per catch-up, until a pass finds none: recovery takes
seconds, not the sweep's quarter of an hour, and a backlog drains at the speed of the work,
not 64 rollouts a sweep. A rollout announced twice is consumed once (``consume`` skips a
consumed one); two processes on one file may both take one (issue 14, item 2, still open).

``processed`` and ``sweeps`` keep the last ``RECENT`` outcomes, for inspection.

Tests drive it without threads or sleeps: ``run_once`` does, in the caller's thread, everything
that is due by the clock. ``start`` runs the same loop in a daemon thread, ``drain`` waits until
everything queued is done, and ``stop`` ends the thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from datetime import datetime, timedelta

from cairn.errors import CairnError, StoreUnavailableError
from cairn.extract.delivery import Consumed, Consumer, consume
from cairn.extract.staging import RolloutPipeline
from cairn.extract.sweep import SweepReport, sweep
from cairn.rollout.index import REDELIVER_AFTER, Rollout, RolloutState
from cairn.rollout.payload import RolloutNotice

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 64
DEFAULT_SWEEP_EVERY = timedelta(seconds=30)
DEFAULT_RETRY_AFTER = timedelta(seconds=5)  # DESIGN §6: one retry after 5 s
_POLL_SECONDS = 0.2
RECENT = 100
_UNFINISHED = (RolloutState.CLAIMED, RolloutState.STAGED, RolloutState.ANNOUNCED)


class InProcessNotifier:
    """A ``Notifier`` that hands notices to an ``ExtractionWorker``."""

    def __init__(self, worker: ExtractionWorker) -> None:
        self._worker = worker

    def announce(self, notice: RolloutNotice) -> None:
        """Queue the notice; ``StoreUnavailableError`` (retryable) if the queue is full."""
        self._worker.submit(notice)


class ExtractionWorker:
    """Consumes announced rollouts and runs the sweep, in one thread (or the caller's)."""

    def __init__(
        self,
        consumer: Consumer,
        *,
        capacity: int = DEFAULT_CAPACITY,
        sweep_every: timedelta = DEFAULT_SWEEP_EVERY,
        retry_after: timedelta = DEFAULT_RETRY_AFTER,
    ) -> None:
        self._consumer = consumer
        self._clock = consumer.clock
        self._queue: queue.Queue[RolloutNotice] = queue.Queue(maxsize=capacity)
        self._sweep_every = sweep_every
        self._retry_after = retry_after
        self._retries: dict[str, tuple[datetime, RolloutNotice]] = {}
        self._retried: set[str] = set()
        self._next_sweep = self._clock.now()
        self._pipeline: RolloutPipeline | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.notifier = InProcessNotifier(self)
        self.processed: deque[Consumed] = deque(maxlen=RECENT)
        self.sweeps: deque[SweepReport] = deque(maxlen=RECENT)
        self._capacity = capacity
        self._catching_up = True  # at start-up: a dead process's queue is gone
        self._started_at = self._clock.now()
        self._caught_up: set[str] = set()

    def attach(self, pipeline: RolloutPipeline) -> None:
        """The pipeline whose rollouts the timer sweeps (its notifier is ``self.notifier``)."""
        self._pipeline = pipeline

    def submit(self, notice: RolloutNotice) -> None:
        try:
            self._queue.put_nowait(notice)
        except queue.Full:
            self._catching_up = True  # the rollout stays staged: pick it up once drained
            raise StoreUnavailableError(
                "the extraction worker's queue is full; the rollout stays staged and the "
                "sweep announces it again"
            ) from None

    def run_once(self) -> list[Consumed]:
        """Everything due now, in this thread: the sweep if its time came, retries whose
        delay passed, then every queued notice. Returns what the notices came to."""
        done: list[Consumed] = []
        while True:
            self._tick()
            handled = False
            while True:
                try:
                    notice = self._queue.get_nowait()
                except queue.Empty:
                    break
                handled = True
                done.extend(self._handle(notice))
            if not handled:
                return done

    def start(self) -> None:
        """Run the loop in a daemon thread until ``stop``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="cairn-extraction", daemon=True)
            self._thread.start()

    def drain(self) -> None:
        """Wait until every queued notice has been handled (``run_once`` if not started)."""
        if self._thread is None:
            self.run_once()
        else:
            self._queue.join()

    def stop(self) -> None:
        """Finish the notice in hand, then end the thread; queued notices stay announced."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._tick()
            try:
                notice = self._queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            self._handle(notice)

    def _tick(self) -> None:
        now = self._clock.now()
        for rid, (when, notice) in list(self._retries.items()):
            if when <= now:
                del self._retries[rid]
                self._retried.add(rid)
                self._safely_submit(notice)
        if self._pipeline is not None and now >= self._next_sweep:
            self._next_sweep = now + self._sweep_every
            self.sweeps.append(sweep(self._pipeline, now=now))
        if self._catching_up and self._pipeline is not None and self._queue.empty():
            self._catching_up = self._catch_up(self._pipeline, now)
            if not self._catching_up:
                self._caught_up.clear()

    def _catch_up(self, pipeline: RolloutPipeline, now: datetime) -> bool:
        """Announce up to ``capacity`` unfinished extraction rollouts not announced in this
        catch-up yet; whether to go on (see the module docstring)."""
        try:
            due = pipeline.rollouts.list_due(
                now + REDELIVER_AFTER, limit=self._capacity + len(self._caught_up)
            )
        except CairnError as exc:
            log.warning("catch-up could not list rollouts (%s); next tick", type(exc).__name__)
            return True
        skip = self._caught_up | self._retries.keys()  # a pending retry keeps its delay
        fresh = [r for r in due if _catchable(r, self._started_at) and r.rollout_id not in skip]
        for rollout in fresh[: self._capacity]:
            self._caught_up.add(rollout.rollout_id)
            if pipeline.release_quietly(rollout) is None:
                return True  # the queue filled or the store is busy: go on next tick
        return bool(fresh)

    def _safely_submit(self, notice: RolloutNotice) -> None:
        try:
            self.submit(notice)
        except StoreUnavailableError:
            log.warning("rollout %s left for the sweep: worker queue full", notice.rollout_id)

    def _handle(self, notice: RolloutNotice) -> list[Consumed]:
        try:
            outcome = consume(notice, self._consumer)
        except CairnError as exc:
            self._after_failure(notice, exc)
            return []
        except Exception as exc:  # a bug in one extraction must not kill the worker thread
            log.error(
                "extraction of rollout %s crashed (%s)", notice.rollout_id, type(exc).__name__
            )
            return []
        finally:
            self._queue.task_done()
        self._retried.discard(notice.rollout_id)
        self.processed.append(outcome)
        return [outcome]

    def _after_failure(self, notice: RolloutNotice, exc: CairnError) -> None:
        rid = notice.rollout_id
        if exc.retryable and rid not in self._retried:
            log.warning("rollout %s: %s; one retry scheduled", rid, type(exc).__name__)
            self._retries[rid] = (self._clock.now() + self._retry_after, notice)
            return
        if exc.retryable:
            log.warning("rollout %s: %s again; left for the sweep", rid, type(exc).__name__)
            self._retried.discard(rid)
            return
        reason = f"{type(exc).__name__}: {exc.message}"
        try:
            self._consumer.rollouts.mark(
                notice.scope, rid, RolloutState.FAILED, now=self._clock.now(), reason=reason
            )
        except CairnError as again:
            log.warning("rollout %s not marked failed (%s)", rid, type(again).__name__)


def _catchable(rollout: Rollout, started_at: datetime) -> bool:
    """An extraction rollout not finished yet (evidence is the consolidation worker's) whose
    notice is in no queue of this worker: claimed or staged, or announced before it started
    (one it announced itself is in its queue, or was retried and left for the sweep)."""
    if rollout.kind == "evidence" or rollout.state not in _UNFINISHED:
        return False
    return rollout.state is not RolloutState.ANNOUNCED or rollout.updated_at <= started_at
