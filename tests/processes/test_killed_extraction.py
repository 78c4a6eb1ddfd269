"""Embedded processes SIGKILLed while they talk and extract; the next one finishes the work.

Four processes append and extract into one SQLite file (the worker thread running), each
killed after a random number of acknowledged appends (a seeded plan): mid-append, mid-staging,
mid-extraction, wherever the signal lands. Then one process opens the store again, as after a
reboot, and runs its worker until it is idle. Afterwards: every acknowledged event is stored
exactly once, every rollout is consumed (nothing stuck announced or staged), no actor holds
the preference twice, and no payload or temporary file of a consumed rollout is left.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from cairn.clock import SystemClock
from cairn.embed.hashing import HashingEmbedder
from cairn.local import offline_model
from cairn.local.api import serve_embedded
from cairn.local.system import staging_dir
from cairn.models import Scope
from cairn.rollout.index import RolloutState
from cairn.store.sqlite import SQLiteBackend

SCALE = int(os.environ.get("CAIRN_SOAK_SCALE", "1"))
PROCESSES = 4
ACTORS = 3 * SCALE  # per process: 6 turns each, the sixth fires a rollout
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.fault("extraction", "killed-before", "sqlite")
@pytest.mark.fault("extraction", "killed-after", "sqlite")
@pytest.mark.fault("formation", "killed-after", "sqlite")
@pytest.mark.slow
def test_killed_embedded_processes_leave_nothing_lost_doubled_or_stuck(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    SQLiteBackend(store, SystemClock()).close()
    plan = random.Random(14)
    command = [sys.executable, "-m", "tests.processes.extract_writer", str(store)]
    acked: list[str] = []
    kills: list[int] = []

    def talk(writer: int, kill_after: int) -> None:
        process = subprocess.Popen(  # noqa: S603  # our own interpreter and module
            [*command, f"w{writer}", str(ACTORS), "ack"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=dict(os.environ),
        )
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("go\n")
        process.stdin.flush()
        for seen, line in enumerate(process.stdout, start=1):
            if line.strip() != "done":
                acked.append(line.strip())
            if seen == kill_after:
                process.send_signal(signal.SIGKILL)
                kills.append(writer)
        process.wait()

    threads = [
        threading.Thread(target=talk, args=(w, plan.randint(3, ACTORS * 6 - 1)))
        for w in range(PROCESSES)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(kills) == list(range(PROCESSES))

    clock = SystemClock()
    stores = SQLiteBackend(store, clock).stores()
    served = serve_embedded(  # the next start: tidies, then its worker catches up
        stores,
        store,
        embedder=HashingEmbedder(),
        model=offline_model(),
        clock=clock,
        start_worker=False,
    )
    try:
        served.extraction.worker.run_once()
        rollouts = stores.rollouts
        assert rollouts is not None
        for actor in range(ACTORS):
            scope = Scope(memory_id="default", actor_id=f"tg:{actor}")
            stuck = [r for r in rollouts.list_pending(scope) if r.kind == "extraction"]
            assert [r.state for r in stuck if r.state is not RolloutState.FAILED] == []
            live = stores.records.list_records(scope, limit=1000).items
            preferences = [
                v for v in live if "green tea" in v.content and "/summaries/" not in v.namespace
            ]
            assert len(preferences) <= 1, f"actor {actor}: {len(preferences)} copies"
            summaries = Counter(v.namespace for v in live if v.namespace.startswith("/summaries/"))
            assert set(summaries.values()) <= {1}, f"actor {actor}: {dict(summaries)}"
        stored = Counter(
            event.metadata["n"]
            for actor in range(ACTORS)
            for session in stores.events.list_sessions(
                Scope(memory_id="default", actor_id=f"tg:{actor}"), limit=1000
            ).items
            for event in stores.events.list_events(
                Scope(memory_id="default", actor_id=f"tg:{actor}"), session.session_id, limit=1000
            ).items
        )
    finally:
        served.close()
    assert all(stored[name] == 1 for name in acked), "an acknowledged event is missing"
    assert max(stored.values(), default=1) == 1, "an event is stored twice"
    assert [p.name for p in staging_dir(store).rglob("*.tmp")] == []
