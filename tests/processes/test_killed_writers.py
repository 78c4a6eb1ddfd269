"""Eight writer processes append into one SQLite scope while some are SIGKILLed (issue 14).

Real processes, real SIGKILLs at random points (a seeded plan: after a random number of
acknowledgements, the next append is under way when the signal lands), bounded in count. After
the run: every acknowledged event is stored exactly once, an event in flight at a kill at most
once, every stored event is counted exactly once (in one claimed rollout or still pending in
the session's counters), and the file passes SQLite's integrity check.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from cairn.clock import SystemClock
from cairn.store.sqlite import SQLiteBackend
from tests.processes.append_writer import SCOPE, SESSION

# `make soak` multiplies the events and the kills (CAIRN_SOAK_SCALE); figures in
# docs/reliability.md.
SCALE = int(os.environ.get("CAIRN_SOAK_SCALE", "1"))
WRITERS = 8
EVENTS = 30 * SCALE  # per writer
KILLS = 8 * SCALE  # in all, spread over the writers by the seeded plan
ROOT = Path(__file__).resolve().parents[2]


def spawn(store: Path, writer: str, first: int) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.processes.append_writer"]
    return subprocess.Popen(  # noqa: S603  # our own interpreter and module
        [*command, str(store), writer, str(first), str(EVENTS)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),  # PYTHONPATH included: the sources under test
    )


def drive(
    store: Path, writer: str, kill_after: list[int], acked: list[str], lost: list[str]
) -> None:
    """Run one writer to the end, killing it after each planned number of acknowledgements
    and starting it again after the event that was in flight."""
    first = 0
    while first < EVENTS:
        process = spawn(store, writer, first)
        assert process.stdout is not None
        killed = False
        for seen, line in enumerate(process.stdout, start=1):
            acked.append(line.strip())
            if kill_after and seen == kill_after[0]:
                kill_after.pop(0)
                process.send_signal(signal.SIGKILL)
                killed = True
        process.wait()
        done = [int(name.rsplit("-", 1)[1]) for name in acked if name.startswith(f"{writer}-")]
        last = max(done, default=first - 1)
        if not killed:
            assert process.returncode == 0
            return
        lost.append(f"{writer}-{last + 1}")  # in flight when the signal landed
        first = last + 2


@pytest.mark.fault("event-append", "killed-before", "sqlite")
@pytest.mark.fault("event-append", "killed-after", "sqlite")
@pytest.mark.fault("trigger", "killed-before", "sqlite")
@pytest.mark.fault("trigger", "killed-after", "sqlite")
@pytest.mark.slow
def test_killed_writers_lose_nothing_acknowledged_and_double_nothing(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    SQLiteBackend(store, SystemClock()).close()  # created and migrated once, before the race
    plan = random.Random(14)
    per_writer = Counter(f"w{plan.randrange(WRITERS)}" for _ in range(KILLS))
    # Each life is cut after a random number of acknowledgements, small enough that every
    # planned kill lands before the writer runs out of events (each restart skips one).
    kills = {
        f"w{i}": [
            plan.randint(1, max(1, (EVENTS - k) // (k + 1)))
            for k in [per_writer[f"w{i}"]] * per_writer[f"w{i}"]
        ]
        for i in range(WRITERS)
    }
    acked: list[str] = []
    in_flight: list[str] = []
    threads = [
        threading.Thread(target=drive, args=(store, writer, k, acked, in_flight))
        for writer, k in kills.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        events = []
        cursor = None
        while True:  # every page: a soak run stores more events than one page holds
            page = stores.events.list_events(SCOPE, SESSION, limit=100, cursor=cursor)
            events.extend(page.items)
            if (cursor := page.next_cursor) is None:
                break
        rollouts = stores.rollouts
        assert rollouts is not None
        counters = rollouts.counters(SCOPE, SESSION)
        claimed = rollouts.list_pending(SCOPE, limit=1000)
    finally:
        stores.close()
    stored = Counter(event.metadata["n"] for event in events)
    assert len(set(acked)) == len(acked)
    assert all(stored[name] == 1 for name in acked), "an acknowledged event is missing"
    assert max(stored.values()) == 1, "an event is stored twice"
    assert set(stored) <= set(acked) | set(in_flight)
    # A planned kill may not land: the writer can run out of events first (it acknowledges
    # faster than this process reads). Most do; the count goes into docs/reliability.md.
    assert len(in_flight) > KILLS // 2
    print(f"{len(in_flight)} SIGKILLs, {len(acked)} acknowledged appends")
    counted = Counter(ref.event_id for r in claimed for ref in r.events)
    counted.update(ref.event_id for ref in (counters.pending if counters else ()))
    assert counted == Counter(event.event_id for event in events), "counted once each"
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
