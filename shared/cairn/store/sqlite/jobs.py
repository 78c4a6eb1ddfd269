"""``JobLog`` on SQLite: one row per memory's switches, one per run, one per marker."""

from __future__ import annotations

from cairn.jobs import JobName, JobRun, JobSwitches, check_marker, check_runs_limit
from cairn.models import Scope
from cairn.store.sqlite.connection import SQLiteDatabase


class SQLiteJobLog:
    """Switches and runs in one SQLite file; behaves exactly like ``InMemoryJobLog``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def switches(self, memory_id: str) -> JobSwitches:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT data FROM job_switches WHERE memory_id = ?", (memory_id,)
            ).fetchone()
        if row is None:
            return JobSwitches(memory_id=memory_id)
        return JobSwitches.model_validate_json(row[0])

    def set_switches(self, switches: JobSwitches) -> None:
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO job_switches (memory_id, data) VALUES (?, ?)",
                (switches.memory_id, switches.model_dump_json()),
            )

    def record_run(self, run: JobRun) -> None:
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO job_runs (memory_id, job, run_id, data)"
                " VALUES (?, ?, ?, ?)",
                (run.memory_id, run.job.value, run.run_id, run.model_dump_json()),
            )

    def runs(self, memory_id: str, job: JobName, *, limit: int = 10) -> tuple[JobRun, ...]:
        check_runs_limit(limit)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM job_runs WHERE memory_id = ? AND job = ?"
                " ORDER BY run_id DESC LIMIT ?",
                (memory_id, job.value, limit),
            ).fetchall()
        return tuple(JobRun.model_validate_json(data) for (data,) in rows)

    def marker(self, scope: Scope, job: JobName, key: str = "") -> str | None:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT value FROM job_markers WHERE memory_id = ? AND actor_id = ? AND job = ?"
                " AND key = ?",
                (scope.memory_id, scope.actor_id, job.value, key),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def set_marker(self, scope: Scope, job: JobName, value: str, key: str = "") -> None:
        check_marker(key, value)
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO job_markers (memory_id, actor_id, job, key, value)"
                " VALUES (?, ?, ?, ?, ?)",
                (scope.memory_id, scope.actor_id, job.value, key, value),
            )

    def erase_markers(self, scope: Scope) -> int:
        with self._db.transaction(write=True) as conn:
            gone = conn.execute(
                "DELETE FROM job_markers WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).rowcount
        return int(gone)
