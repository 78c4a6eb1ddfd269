"""The deferred consolidation worker: passes in the background, for embedded and long-lived hosts.

``ConsolidationWorker`` admits scopes through ``notify`` (its ``notifier`` is the ``Notifier``
evidence is announced on), decides with a ``PassScheduler`` which passes start, and runs them
on an executor (a thread pool of ``min(4, capacity)`` threads unless one is injected). Passes
are ``consolidate_scope`` calls (``run_pass``); their model usage is summed in ``usage``,
apart from anything the agent spends. Secondary failures go to ``on_error`` (never to the
agent): errors a pass raised, invalid answers, and a deadline failure that failed again.

- A drained worker blocks on its condition until a notification arrives: no polling.
- ``stop`` cancels the running passes (they commit nothing past the cancellation) and joins
  them; queued scopes are forgotten, their evidence stays pending in the store.
- ``consolidation_worker(consolidator)`` binds ``consolidate_scope`` to a ``Consolidator``
  (``cairn.consolidate.commit.build_consolidator``) and returns the worker, not started;
  ``cairn.local`` wires it beside the extraction worker, one notifier routing extraction
  rollouts there and run evidence here (``KindRouter``). Without a worker,
  ``consolidate_with_retry(scope, consolidator)`` is the synchronous call.
- Tests drive it without threads or sleeps: ``run_once`` starts, on the injected executor,
  every pass due by the injected clock (a synchronous executor runs them to the end at once;
  a manual one lets a test hold them), and returns the outcomes finished meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from datetime import timedelta

from cairn.consolidate.commit import Consolidator, PassOutcome, consolidate_scope
from cairn.consolidate.failures import ConsolidationFailure, ErrorCallback, report
from cairn.consolidate.schedule import COALESCING_WINDOW, RETRY_AFTER, PassScheduler
from cairn.errors import CairnError, StoreUnavailableError
from cairn.model_request import NO_USAGE, ModelUsage
from cairn.models import Scope
from cairn.ports import Clock, Notifier
from cairn.rollout.index import rollout_kind
from cairn.rollout.payload import RolloutNotice

log = logging.getLogger(__name__)

DEFAULT_CAPACITY = 64
RunPass = Callable[[Scope, Callable[[], bool]], PassOutcome]


class EvidenceNotifier:
    """A ``Notifier`` that admits the announced rollout's scope to a ``ConsolidationWorker``."""

    def __init__(self, worker: ConsolidationWorker) -> None:
        self._worker = worker

    def announce(self, notice: RolloutNotice) -> None:
        """Admit the notice's scope; ``StoreUnavailableError`` (retryable) when the worker is
        full: the rollout stays staged and the sweep announces it again."""
        if not self._worker.notify(notice.scope):
            raise StoreUnavailableError(
                "the consolidation worker is at capacity; the evidence stays pending and is "
                "announced again by the sweep"
            )


class KindRouter:
    """A ``Notifier`` that hands extraction rollouts to one notifier and evidence to another
    (by the rollout id's kind: ``cairn.rollout.index.rollout_kind``)."""

    def __init__(self, *, extraction: Notifier, evidence: Notifier) -> None:
        self._extraction = extraction
        self._evidence = evidence

    def announce(self, notice: RolloutNotice) -> None:
        evidence = rollout_kind(notice.rollout_id) == "evidence"
        (self._evidence if evidence else self._extraction).announce(notice)


class ConsolidationWorker:
    """Runs consolidation passes in the background within the scheduler's bounds."""

    def __init__(
        self,
        run_pass: RunPass,
        *,
        clock: Clock,
        capacity: int = DEFAULT_CAPACITY,
        window: timedelta = COALESCING_WINDOW,
        retry_after: timedelta = RETRY_AFTER,
        executor: Executor | None = None,
        on_error: ErrorCallback | None = None,
    ) -> None:
        self._run_pass = run_pass
        self._clock = clock
        self._scheduler = PassScheduler(capacity=capacity, window=window, retry_after=retry_after)
        self._own_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(
            max_workers=self._scheduler.concurrency, thread_name_prefix="cairn-consolidation"
        )
        self._on_error = on_error
        self._cond = threading.Condition()
        self._cancel = threading.Event()
        self._active: set[Future[PassOutcome | None]] = set()
        self._finished: list[PassOutcome] = []
        self._thread: threading.Thread | None = None
        self.notifier = EvidenceNotifier(self)
        self.outcomes: list[PassOutcome] = []
        self.usage: ModelUsage = NO_USAGE

    @property
    def scheduler(self) -> PassScheduler:
        return self._scheduler

    def notify(self, scope: Scope) -> bool:
        """Admit ``scope`` for a pass (coalesced with a queued or running one); ``False`` when
        the worker is full or stopped (the evidence stays pending in the store)."""
        if self._cancel.is_set():
            return False
        with self._cond:
            admitted = self._scheduler.notify(scope, self._clock.now())
            self._cond.notify_all()
        return admitted

    def run_once(self) -> list[PassOutcome]:
        """Start every pass due now (by the clock) and return the passes finished since the
        last call; with a synchronous executor that is every pass it started."""
        self._start_due()
        with self._cond:
            done, self._finished = self._finished, []
        return done

    def start(self) -> None:
        """Run the scheduling loop in a daemon thread until ``stop``."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="cairn-consolidation-loop", daemon=True
            )
            self._thread.start()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running (retries included); ``False`` on timeout.
        Without the loop thread, run what is due instead (tests move the clock themselves)."""
        if self._thread is None:
            self.run_once()
            return self._scheduler.admitted == 0
        with self._cond:
            return self._cond.wait_for(lambda: self._scheduler.admitted == 0, timeout)

    def stop(self) -> None:
        """Cancel running passes and join them, end the loop; queued scopes are dropped (their
        evidence stays pending)."""
        self._cancel.set()
        with self._cond:
            self._cond.notify_all()
            active = list(self._active)
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for future in active:
            if not future.cancel():  # not started yet: never will be
                future.exception()  # joins the running pass; its outcome is recorded
        if self._own_executor:
            self._executor.shutdown(wait=True)

    def _loop(self) -> None:
        while not self._cancel.is_set():
            self._start_due()
            with self._cond:
                if self._cancel.is_set():
                    return
                ready = self._scheduler.next_ready()
                now = self._clock.now()
                if ready is None:
                    self._cond.wait()  # drained or every slot busy: a notification wakes us
                elif ready > now:
                    self._cond.wait((ready - now).total_seconds())

    def _start_due(self) -> None:
        with self._cond:
            if self._cancel.is_set():
                return
            scopes = self._scheduler.take(self._clock.now())
        for scope in scopes:  # submitted outside the lock: a synchronous executor finishes here
            future = self._executor.submit(self._run, scope)
            with self._cond:
                self._active.add(future)
            future.add_done_callback(self._forget)

    def _forget(self, future: Future[PassOutcome | None]) -> None:
        with self._cond:
            self._active.discard(future)

    def _run(self, scope: Scope) -> PassOutcome | None:
        outcome: PassOutcome | None = None
        retry = False
        try:
            outcome = self._run_pass(scope, self._cancel.is_set)
            retry = outcome.retryable
        except CairnError as exc:
            retry = exc.retryable
            self._failed(scope, type(exc).__name__, exc.retryable, exc.message)
        except Exception as exc:  # a bug in one pass must not take the worker down
            log.error("consolidation pass crashed (%s)", type(exc).__name__)
            self._failed(scope, type(exc).__name__, False, "the pass crashed; see the log")
        with self._cond:
            was_retry = self._scheduler.retrying(scope)
            self._scheduler.finish(
                scope,
                self._clock.now(),
                more=outcome is not None and outcome.more_pending,
                retry=retry,
            )
            if outcome is not None:
                self._finished.append(outcome)
                self.outcomes.append(outcome)
                self.usage += outcome.usage
            self._cond.notify_all()
        if outcome is not None and (
            outcome.status == "invalid" or (outcome.retryable and was_retry)
        ):
            # Invalid answers, and deadline failures that failed again: the evidence waits
            # for a later run; the host hears of it.
            self._failed(scope, outcome.status, outcome.retryable, outcome.reason or "")
        return outcome

    def _failed(self, scope: Scope, error: str, retryable: bool, message: str) -> None:
        report(
            self._on_error,
            ConsolidationFailure(
                scope=scope, stage="pass", error=error, retryable=retryable, message=message
            ),
        )


def consolidation_worker(
    consolidator: Consolidator,
    *,
    capacity: int = DEFAULT_CAPACITY,
    executor: Executor | None = None,
    on_error: ErrorCallback | None = None,
) -> ConsolidationWorker:
    """A worker running ``consolidator``'s passes (call ``start`` to run it in the background)."""

    def run_pass(scope: Scope, cancelled: Callable[[], bool]) -> PassOutcome:
        return consolidate_scope(scope, consolidator, cancelled=cancelled)

    return ConsolidationWorker(
        run_pass,
        clock=consolidator.clock,
        capacity=capacity,
        executor=executor,
        on_error=on_error,
    )
