"""The first recall of a fresh process, and ``cairn recall`` as a whole process.

``python -m benchmarks.speed_first DB QUESTION`` opens the SQLite file ``DB`` the speed
benchmark filled, loads the ONNX embedder and embeds one warm-up text (so the model's load is
not counted), then times one shipped recall (journal written) and prints JSON. Timed two ways:
with the store's folder of persisted index snapshots removed first, so the recall builds the
scope's index from the store and writes its snapshot (what the first process after a write
pays), and with the snapshot the last of those left, so the recall maps it (what an agent's
first turn after a restart pays). ``cairn recall`` is timed from outside, interpreter start
to exit, two ways: as an installed package runs it (bytecode compiled once, as pip compiles
at install; here into a private cache directory, after one untimed run), and as a checkout
runs it with ``PYTHONDONTWRITEBYTECODE`` set (cairn's own modules compiled afresh on every
run). The CPU time (user + system) of the installed run is reported beside its wall time:
the machine may be shared, and wall time rises with its load while CPU time mostly does not.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.speed_recall import SCOPE
from cairn.store.sqlite.backend import snapshot_folder_of

RUNS = 3


@dataclass(frozen=True)
class FirstRecall:
    """Medians over ``RUNS`` fresh processes, in milliseconds."""

    records: int
    embedder_load_ms: float
    first_recall_ms: float  # the index mapped from its persisted snapshot
    first_build_ms: float  # the index built from the store, and its snapshot written
    command_ms: float
    command_source_ms: float
    command_cpu_ms: float


def measure_here(db: Path, question: str) -> dict[str, float]:
    began = time.perf_counter()
    from cairn.clock import SystemClock
    from cairn.embed.onnx import OnnxEmbedder
    from cairn.recall import RecallQuery, recall
    from cairn.store.sqlite import SQLiteBackend

    embedder = OnnxEmbedder()
    embedder.embed(["warm up"])
    loaded = time.perf_counter()
    with SQLiteBackend(db) as backend:
        started = time.perf_counter()
        recall(
            SCOPE,
            RecallQuery(text=question),
            stores=backend.stores(),
            embedder=embedder,
            clock=SystemClock(),
        )
        done = time.perf_counter()
    return {"embedder_load_ms": (loaded - began) * 1000, "first_recall_ms": (done - started) * 1000}


def _command(db: Path, question: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one ``cairn recall`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(  # noqa: S603 - our own interpreter and command
        [sys.executable, "-m", "cairn", "recall", "--store", str(db), *_scope_args(), question],
        capture_output=True,
        check=True,
        env=env,
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def _environment(pycache: Path | None) -> dict[str, str]:
    """This environment, with bytecode kept in ``pycache``, or (``None``) never written."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def _scope_args() -> list[str]:
    return ["--memory", SCOPE.memory_id, "--actor", SCOPE.actor_id]


def _fresh(db: Path, question: str) -> dict[str, float]:
    completed = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "benchmarks.speed_first", str(db), question],
        capture_output=True,
        text=True,
        check=True,
    )
    measured: dict[str, float] = json.loads(completed.stdout)
    return measured


def first_recall(db: Path, question: str, records: int) -> FirstRecall:
    """``RUNS`` fresh processes each way; medians."""
    built = []
    for _ in range(RUNS):
        shutil.rmtree(snapshot_folder_of(db), ignore_errors=True)
        built.append(_fresh(db, question))
    measured = [_fresh(db, question) for _ in range(RUNS)]  # the last build left its snapshot
    with tempfile.TemporaryDirectory(prefix="cairn-pycache-") as folder:
        compiled = _environment(Path(folder))
        _command(db, question, compiled)  # compiles the bytecode; not timed
        commands = [_command(db, question, compiled) for _ in range(RUNS)]
        source = _environment(None)
        from_source = [_command(db, question, source) for _ in range(RUNS)]
    return FirstRecall(
        records=records,
        embedder_load_ms=statistics.median(m["embedder_load_ms"] for m in measured),
        first_recall_ms=statistics.median(m["first_recall_ms"] for m in measured),
        first_build_ms=statistics.median(m["first_recall_ms"] for m in built),
        command_ms=statistics.median(wall for wall, _ in commands),
        command_source_ms=statistics.median(wall for wall, _ in from_source),
        command_cpu_ms=statistics.median(cpu for _, cpu in commands),
    )


def main() -> int:
    db, question = sys.argv[1:3]
    print(json.dumps(measure_here(Path(db), question)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
