"""The rollup in the embedded worker: passes over sessions in one background thread.

``RollupWorker.request(scope, session_id)`` asks for a pass over the session (the embedded
system asks whenever an extraction trigger fires for it). Passes run one at a time, in a
thread of their own, so an agent's append never waits for a model; a request for a session
whose pass is queued or running is folded into one more pass after it, so turns that arrived
meanwhile are never left waiting for the next trigger. A memory that switched the rollup off
(``cairn.jobs.JobSwitches``) is not rolled up; every pass that runs is logged as a ``JobRun``.
After a pass, the same thread runs the scheduled jobs over the pass's memory (access counting
and link generation, ``cairn.history.scheduled``; each honouring its switch and logging its
run), at most once per ``jobs_every`` per memory. ``drain`` waits for what is queued; ``stop``
drains and ends the thread. Before ``start`` (and
after ``stop``) a request is dropped, never an error: an agent's append must not fail for it.
"""

from __future__ import annotations

import logging
import secrets
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta

from cairn.history.rollup import roll_up_session
from cairn.history.scheduled import SCHEDULED_EVERY, run_scheduled_jobs
from cairn.jobs import JobName, JobRun, job_run_id
from cairn.models import EmbedderId, Scope
from cairn.ports import Clock, Embedder, ModelProvider, Stores

log = logging.getLogger(__name__)

Key = tuple[Scope, str]


class RollupWorker:
    """Background rollup passes over ``stores`` (which must keep chunks), one at a time."""

    def __init__(
        self,
        stores: Stores,
        model: ModelProvider,
        *,
        clock: Clock,
        embedder: EmbedderId | None = None,
        embed_with: Embedder | None = None,
        jobs_every: timedelta | None = SCHEDULED_EVERY,
    ) -> None:
        if stores.chunks is None:
            raise ValueError("a rollup worker needs stores that keep the history pyramid")
        self._stores = stores
        self._model = model
        self._clock = clock
        self._embedder = embedder
        self._embed_with = embed_with
        self._jobs_every = jobs_every
        self._jobs_ran: dict[str, datetime] = {}
        self._lock = threading.Lock()
        self._queued: dict[Key, bool] = {}  # key -> whether one more pass was asked for
        self._futures: list[Future[None]] = []
        self._executor: ThreadPoolExecutor | None = None

    def start(self) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rollup")

    def request(self, scope: Scope, session_id: str) -> None:
        """Ask for a pass over the session; returns at once."""
        jobs = self._stores.jobs
        if jobs is not None and not jobs.switches(scope.memory_id).is_on(JobName.ROLLUP):
            return
        key = (scope, session_id)
        with self._lock:
            if self._executor is None:
                return  # not started, or stopped: the next trigger after start asks again
            if key in self._queued:
                self._queued[key] = True
                return
            self._queued[key] = False
            self._futures = [f for f in self._futures if not f.done()]
            self._futures.append(self._executor.submit(self._passes, key))

    def drain(self) -> None:
        """Wait until every requested pass has run."""
        while True:
            with self._lock:
                pending = [f for f in self._futures if not f.done()]
            if not pending:
                return
            for future in pending:
                future.result()

    def stop(self) -> None:
        """Run what is queued, then end the thread; idempotent."""
        self.drain()
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    def _passes(self, key: Key) -> None:
        while True:
            self._pass(key)
            with self._lock:
                if not self._queued.get(key):
                    del self._queued[key]
                    break
                self._queued[key] = False  # asked for again meanwhile: one more pass
        self._scheduled(key[0].memory_id)

    def _scheduled(self, memory_id: str) -> None:
        now = self._clock.now()
        last = self._jobs_ran.get(memory_id)
        if self._jobs_every is None or (last is not None and now - last < self._jobs_every):
            return
        self._jobs_ran[memory_id] = now
        try:
            run_scheduled_jobs(
                self._stores,
                self._model,
                memory_id,
                embedder=self._embedder,
                clock=self._clock,
                embed_with=self._embed_with,
            )
        except Exception as exc:  # a store failure: the next pass after jobs_every retries
            log.warning("cairn: the scheduled jobs failed (%s)", type(exc).__name__)

    def _pass(self, key: Key) -> None:
        scope, session_id = key
        chunks = self._stores.chunks
        assert chunks is not None  # checked in __init__
        started = self._clock.now()
        try:
            report = roll_up_session(
                self._stores.events, chunks, self._model, scope, session_id, clock=self._clock
            )
        except Exception as exc:  # a store failure: the next request tries again
            log.warning(
                "cairn: a rollup pass failed (%s); the next trigger retries", type(exc).__name__
            )
            return
        if self._stores.jobs is None:
            return
        self._stores.jobs.record_run(
            JobRun(
                memory_id=scope.memory_id,
                job=JobName.ROLLUP,
                run_id=job_run_id(started, secrets.token_hex(4)),
                started_at=started,
                finished_at=self._clock.now(),
                outcome="partial" if report.skipped else "done",
                actors=1,
                changed=report.chunks,
                reasons=(report.skipped,) if report.skipped else (),
            )
        )
