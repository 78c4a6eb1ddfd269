"""Background jobs: which exist, their per-memory switches, and the run log each keeps.

A job is work that runs beside the conversation, not inside a request: the history rollup
(``cairn.history.job``), link generation (``cairn.history.linking``), access counting
(``cairn.history.access``), decay (``cairn.history.decay``), evolution
(``cairn.history.evolution``) and reflection (``cairn.history.reflection``), the last three
off unless switched on. Each memory switches each
job on or off (``JobSwitches``; a job not named takes its default), and every run, whether it
did anything or not, leaves one ``JobRun`` in the log: what ran, when, over how many actors,
what it changed and, when it did nothing or stopped early, why. A run log holds counts and
reasons, never memory content.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from cairn.errors import InvalidInputError
from cairn.models import Frozen, Label, MemoryId, UtcDatetime


class JobName(StrEnum):
    ROLLUP = "rollup"
    LINK = "link"
    ACCESS = "access"
    DECAY = "decay"
    EVOLUTION = "evolution"
    REFLECTION = "reflection"


# What each job does, and whether a memory runs it unless switched.
JOB_DEFAULTS: dict[JobName, bool] = {
    JobName.ROLLUP: True,
    JobName.LINK: True,
    JobName.ACCESS: True,
    JobName.DECAY: False,
    JobName.EVOLUTION: False,
    JobName.REFLECTION: False,
}
JOB_SUMMARIES: dict[JobName, str] = {
    JobName.ROLLUP: "summarise complete batches of ten turns (and of ten chunks) into the "
    "history pyramid, through the model",
    JobName.LINK: "propose typed links (from the vocabulary) between nearby records, through "
    "the model; kept beside the records, untrusted, never changing them",
    JobName.ACCESS: "count how many recalls showed each record, from the recall journal since "
    "the last count (recall itself stays a read)",
    JobName.DECAY: "measure each record's salience, halving per idle half-life (30 days) since "
    "it was last shown or confirmed; kept beside the records, deleting nothing, not yet read by "
    "recall",
    JobName.EVOLUTION: "refresh a record's context line and tags from its linked neighbours, "
    "through the model, as a new version whose sources include theirs, the links' and the "
    "model's (trust only falls), only where every such source may change it; never its content",
    JobName.REFLECTION: "synthesise one insight per cluster of never-recalled records, through "
    "the model, as an untrusted record of its own citing and linked to them (revised when they "
    "change, retracted when one is no longer live); flag nearby records the model says "
    "contradict each other as contested, never changing their content or trust",
}
MAX_REASONS = 20
Reason = Annotated[str, Field(min_length=1, max_length=300)]


class JobSwitches(Frozen):
    """A memory's switches; a job it does not name runs by its default (``JOB_DEFAULTS``)."""

    memory_id: MemoryId
    enabled: dict[JobName, bool] = Field(default_factory=dict)

    def is_on(self, job: JobName) -> bool:
        return self.enabled.get(job, JOB_DEFAULTS[job])

    def switched(self, job: JobName, on: bool) -> JobSwitches:
        return self.model_copy(update={"enabled": {**self.enabled, job: on}})


class JobRun(Frozen):
    """One run of a job over one memory. ``run_id`` begins with its start time, so id order is
    start order; ``reasons`` say why something was skipped (no content, at most 20)."""

    memory_id: MemoryId
    job: JobName
    run_id: Label
    started_at: UtcDatetime
    finished_at: UtcDatetime
    outcome: Literal["done", "partial", "skipped"]
    actors: int = Field(default=0, ge=0)
    changed: int = Field(default=0, ge=0)
    reasons: tuple[Reason, ...] = Field(default=(), max_length=MAX_REASONS)


def job_run_id(started_at: UtcDatetime, suffix: str) -> str:
    """``job-<start, UTC, to the microsecond>-<suffix>``: sorts as the runs started."""
    return f"job-{started_at:%Y%m%dT%H%M%S%f}-{suffix}"


MAX_RUNS_LISTED = 100
MAX_MARKER_KEY_CHARS = 128
MAX_MARKER_CHARS = 256


def check_runs_limit(limit: int) -> None:
    """Refuse a run-log page outside ``1..MAX_RUNS_LISTED``."""
    if not 1 <= limit <= MAX_RUNS_LISTED:
        raise InvalidInputError(f"limit must be between 1 and {MAX_RUNS_LISTED}, got {limit}")


def check_marker(key: str, value: str) -> None:
    """Refuse a job marker whose key or value is too long (``JobLog.set_marker``)."""
    if len(key) > MAX_MARKER_KEY_CHARS:
        raise InvalidInputError(
            f"a job marker's key has {len(key)} characters, over {MAX_MARKER_KEY_CHARS}; "
            "key it by an id"
        )
    if not 1 <= len(value) <= MAX_MARKER_CHARS:
        raise InvalidInputError(
            f"a job marker holds 1 to {MAX_MARKER_CHARS} characters, got {len(value)}; note a "
            "cursor, a generation or a digest, never content"
        )
