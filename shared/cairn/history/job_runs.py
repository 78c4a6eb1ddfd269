"""What every background job shares: its switch check, its run id and its run log entry."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from cairn.jobs import MAX_REASONS, JobName, JobRun, job_run_id
from cairn.models import Scope
from cairn.ports import Clock, Stores

ACTORS_LEFT = "actor(s) left for the next run: the run's bound was reached"


@dataclass
class RunTally:
    """A run in progress: actors visited, changes made, and why anything was skipped (counted
    reasons, never content or ids)."""

    job: JobName
    memory_id: str
    started: datetime
    run_id: str
    actors: int = 0
    changed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    # Why something was passed over by design (a scope unchanged since the last run): listed
    # with the reasons, but not a stop, so the run stays ``done``.
    notes: Counter[str] = field(default_factory=Counter)

    def scopes(
        self, stores: Stores, memory_id: str, exhausted: Callable[[], bool]
    ) -> Iterator[Scope]:
        """The scope of each actor of the memory, counted as visited, while ``exhausted()`` is
        false; each actor left once it is true is counted as a reason (``ACTORS_LEFT``)."""
        for actor_id in stores.records.actors(memory_id):
            if exhausted():
                self.reasons[ACTORS_LEFT] += 1
                continue
            self.actors += 1
            yield Scope(memory_id=memory_id, actor_id=actor_id)

    def finish(self, stores: Stores, clock: Clock, *, skipped: str | None = None) -> JobRun:
        """The run's log entry, recorded in ``stores.jobs`` when the stores keep one."""
        outcome: Literal["done", "partial", "skipped"]
        reasons: tuple[str, ...]
        if skipped is not None:
            outcome, reasons = "skipped", (skipped,)
        else:
            outcome = "partial" if self.reasons else "done"
            listed = [*self.reasons.most_common(), *self.notes.most_common()][:MAX_REASONS]
            reasons = tuple(f"{count}× {why}"[:300] for why, count in listed)
        run = JobRun(
            memory_id=self.memory_id,
            job=self.job,
            run_id=self.run_id,
            started_at=self.started,
            finished_at=clock.now(),
            outcome=outcome,
            actors=self.actors,
            changed=self.changed,
            reasons=reasons,
        )
        if stores.jobs is not None:
            stores.jobs.record_run(run)
        return run


@dataclass
class Countdown:
    """A run's bound in units (journal entries, records) and what is left of it."""

    left: int

    def spent(self) -> bool:
        return self.left <= 0

    def take(self, used: int) -> None:
        self.left -= used


def start_run(job: JobName, memory_id: str, clock: Clock) -> RunTally:
    started = clock.now()
    return RunTally(job, memory_id, started, job_run_id(started, secrets.token_hex(4)))


def switched_off(stores: Stores, memory_id: str, job: JobName) -> str | None:
    """The reason a run is skipped when the memory switched the job off, else ``None``."""
    if stores.jobs is not None and not stores.jobs.switches(memory_id).is_on(job):
        return f"{job.value} is switched off for this memory"
    return None
