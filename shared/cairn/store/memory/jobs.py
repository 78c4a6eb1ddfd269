"""``JobLog`` in process memory: switches, runs and markers, guarded by the backend's lock."""

from __future__ import annotations

import threading

from cairn.jobs import JobName, JobRun, JobSwitches, check_marker, check_runs_limit
from cairn.models import Scope


class InMemoryJobLog:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._switches: dict[str, JobSwitches] = {}
        self._runs: dict[tuple[str, JobName], dict[str, JobRun]] = {}
        self._markers: dict[Scope, dict[tuple[JobName, str], str]] = {}

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

    def marker(self, scope: Scope, job: JobName, key: str = "") -> str | None:
        with self._lock:
            return self._markers.get(scope, {}).get((job, key))

    def set_marker(self, scope: Scope, job: JobName, value: str, key: str = "") -> None:
        check_marker(key, value)
        with self._lock:
            self._markers.setdefault(scope, {})[(job, key)] = value

    def erase_markers(self, scope: Scope) -> int:
        with self._lock:
            return len(self._markers.pop(scope, {}))
