"""``JobLog`` in process memory: switches and runs by memory, guarded by the backend's lock."""

from __future__ import annotations

import threading

from cairn.jobs import JobName, JobRun, JobSwitches, check_runs_limit


class InMemoryJobLog:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._switches: dict[str, JobSwitches] = {}
        self._runs: dict[tuple[str, JobName], dict[str, JobRun]] = {}

    def switches(self, memory_id: str) -> JobSwitches:
        with self._lock:
            return self._switches.get(memory_id) or JobSwitches(memory_id=memory_id)

    def set_switches(self, switches: JobSwitches) -> None:
        with self._lock:
            self._switches[switches.memory_id] = switches

    def record_run(self, run: JobRun) -> None:
        with self._lock:
            self._runs.setdefault((run.memory_id, run.job), {})[run.run_id] = run

    def runs(self, memory_id: str, job: JobName, *, limit: int = 10) -> tuple[JobRun, ...]:
        check_runs_limit(limit)
        with self._lock:
            runs = self._runs.get((memory_id, job), {})
            return tuple(runs[rid] for rid in sorted(runs, reverse=True)[:limit])
