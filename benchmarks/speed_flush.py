"""How long a session's batch of turns takes to write: ``python -m benchmarks.speed_flush``.

A ``MemorySession`` of the embedded system (``cairn.local.wire_embedded`` over a SQLite file, its
extraction workers not started, so only the write is timed: appends, trigger counting, and the
release of what a trigger claims) receives turns in batches of ``SessionOptions.batch_size``
(8); each batch's last ``add_turn`` writes the batch, and that call is timed. Every session
is new, so each batch starts a session's counters; the memory's default triggers apply.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.timing import Timing
from cairn.clock import SystemClock
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import staging_dir, wire_embedded
from cairn.models import Role
from cairn.runtime import SessionOptions
from cairn.store.sqlite import SQLiteBackend

BATCH = SessionOptions().batch_size


def time_flushes(path: Path, batches: int) -> Timing:
    """The wall time of each batch's write, in ms, over ``batches`` new sessions."""
    clock = SystemClock()
    stores = SQLiteBackend(path, clock).stores()
    embedded = wire_embedded(
        stores,
        FilesystemStagingStore(staging_dir(path)),
        model=offline_model(),
        embedder=None,
        clock=clock,
    )
    samples: list[float] = []
    try:
        for k in range(batches):
            session = embedded.session(memory_id="bench", actor_id="u1", session_id=f"s{k}")
            for i in range(BATCH - 1):
                session.add_turn(Role.USER, f"turn {i} of session {k}: I like green tea")
            started = time.perf_counter()
            session.add_turn(Role.ASSISTANT, "noted, green tea it is")
            samples.append((time.perf_counter() - started) * 1000)
            assert session.pending_turns == 0
    finally:
        stores.close()
    return Timing(tuple(samples))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed_flush", description=__doc__)
    parser.add_argument("--batches", type=int, default=200, help="sessions, one batch each")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-flush-") as workdir:
        timing = time_flushes(Path(workdir) / "flush.db", args.batches)
    print(*(f"- {line}" for line in report.machine_facts()), sep="\n")
    print(
        f"a batch of {BATCH} turns written: median {timing.median:.2f} ms, "
        f"p95 {timing.p95:.2f} ms over {timing.runs} batches"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
