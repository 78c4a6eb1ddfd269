"""What every background job shares: its switch check, its run id, its walk over the memory's
actors and its run log entry.

The walk (``RunTally.scopes``) resumes after the last actor the job visited in the memory (a
marker per memory and job, ``WALK_KEY``, noted under ``WALK_SCOPE_ACTOR``'s scope), in actor
order, wrapping around: a run whose bound (count or time, ``until``) stops it early leaves the
actors after it to the next run, rather than starting from the first actor again and never
reaching the last ones."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from cairn.jobs import MAX_REASONS, JobName, JobRun, job_run_id
from cairn.models import Scope
from cairn.ports import Clock, Stores

ACTORS_LEFT = "actor(s) left for the next run: the run's bound was reached"
# The walk's marker: the job's marker under this key, in the memory's scope of this actor id
# (an actor of that name keeps its own markers under other keys; erasing it restarts a walk).
WALK_KEY = "walk:last-actor"
WALK_SCOPE_ACTOR = "cairn-actor-walk"


@dataclass
class RunTally:
    """A run in progress: actors visited, changes made, and why anything was skipped (counted
    reasons, never content or ids)."""

    job: JobName
    memory_id: str
    started: datetime
    run_id: str
    clock: Clock | None = None
    until: datetime | None = None  # no actor is started at or after it
    actors: int = 0
    changed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    # Why something was passed over by design (a scope unchanged since the last run): listed
    # with the reasons, but not a stop, so the run stays ``done``.
    notes: Counter[str] = field(default_factory=Counter)

    def scopes(
        self, stores: Stores, memory_id: str, exhausted: Callable[[], bool]
    ) -> Iterator[Scope]:
        """The scope of each actor of the memory, counted as visited, from the one after the
        job's last visited actor round to it, while ``exhausted()`` is false and ``until`` has
        not come; each actor left then is counted as a reason (``ACTORS_LEFT``). Once walked
        through, the last actor visited is noted for the next run."""
        walk = Scope(memory_id=memory_id, actor_id=WALK_SCOPE_ACTOR)
        noted = stores.jobs.marker(walk, self.job, key=WALK_KEY) if stores.jobs else None
        last = noted
        for actor_id in resumed(stores.records.actors(memory_id), noted):
            if exhausted() or self._out_of_time():
                self.reasons[ACTORS_LEFT] += 1
                continue
            self.actors += 1
            last = actor_id
            yield Scope(memory_id=memory_id, actor_id=actor_id)
        if stores.jobs is not None and last is not None and last != noted:
            stores.jobs.set_marker(walk, self.job, last, key=WALK_KEY)

    def _out_of_time(self) -> bool:
        return self.until is not None and self.clock is not None and self.clock.now() >= self.until

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


def start_run(
    job: JobName, memory_id: str, clock: Clock, until: datetime | None = None
) -> RunTally:
    """A run of ``job`` over the memory, starting no actor at or after ``until``."""
    started = clock.now()
    run_id = job_run_id(started, secrets.token_hex(4))
    return RunTally(job, memory_id, started, run_id, clock=clock, until=until)


def resumed(actors: Iterable[str], after: str | None) -> list[str]:
    """``actors`` in order, starting after ``after`` and wrapping round to it."""
    ordered = sorted(actors)
    if after is None:
        return ordered
    return [a for a in ordered if a > after] + [a for a in ordered if a <= after]


def switched_off(stores: Stores, memory_id: str, job: JobName) -> str | None:
    """The reason a run is skipped when the memory switched the job off, else ``None``."""
    if stores.jobs is not None and not stores.jobs.switches(memory_id).is_on(job):
        return f"{job.value} is switched off for this memory"
    return None
