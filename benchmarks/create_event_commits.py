"""What one CreateEvent costs the embedded store in commits: time per call, with and without a
clientToken, in process (no HTTP), on a SQLite file in a temporary directory.

Count the fsyncs by running it under strace (the figure in docs/benchmarks.md):

    strace -f -c -e trace=fsync,fdatasync python -m benchmarks.create_event_commits --calls 300

Each phase prints its calls, p50 and p99; strace's table counts every fsync of the run (the
store's migrations and memory creation add a fixed handful).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from cairn.api.context import ApiContext
from cairn.api.operations.events import create_event
from cairn.api.operations.memories import create_memory
from cairn.clock import SystemClock
from cairn.store.sqlite import SQLiteBackend


def _phase(ctx: ApiContext, memory_id: str, calls: int, *, token: bool) -> list[float]:
    took = []
    for n in range(calls):
        params = {
            "memoryId": memory_id,
            "actorId": "tg:1",
            "sessionId": "s1",
            "eventTimestamp": time.time(),
            "payload": [{"conversational": {"content": {"text": f"turn {n}"}, "role": "USER"}}],
        }
        if token:
            params["clientToken"] = str(uuid.uuid4())
        start = time.perf_counter()
        create_event(ctx, params)
        took.append(time.perf_counter() - start)
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--token", choices=("with", "without", "both"), default="both")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        stores = SQLiteBackend(Path(folder) / "cairn.db", SystemClock()).stores()
        try:
            ctx = ApiContext.build(stores, embedder=None, clock=SystemClock())
            memory_id = create_memory(ctx, {"name": "bench", "eventExpiryDuration": 7})["memory"][
                "id"
            ]
            phases = {"with": True, "without": False}
            for name, token in phases.items():
                if args.token not in (name, "both"):
                    continue
                took = sorted(_phase(ctx, memory_id, args.calls, token=token))
                p99 = took[min(len(took) - 1, int(len(took) * 0.99))]
                print(
                    f"CreateEvent {name} clientToken: {len(took)} calls, "
                    f"p50 {statistics.median(took) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
                )
        finally:
            stores.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
