"""Peak memory of one recall, in a fresh process: ``python -m benchmarks.speed_memory DB NPY Q``.

Opens the SQLite file ``DB`` the speed benchmark filled, answers question ``Q`` with its vector
read from ``NPY`` (so no ONNX model is loaded), and prints JSON: the peak of Python-tracked
allocations during the recall (``tracemalloc``, numpy arrays included) and the process's peak
resident set before and after it (``VmHWM`` of /proc/self/status: unlike ``ru_maxrss``, which
Linux carries across ``exec`` from the parent, it starts afresh in the new process).
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.speed_recall import NOW, SCOPE, PrecomputedEmbedder
from cairn.clock import FixedClock
from cairn.embed.onnx import DIMS, MODEL_ID
from cairn.models import EmbedderId
from cairn.recall import RecallQuery, recall
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.backend import snapshot_folder_of


@dataclass(frozen=True)
class PeakMemory:
    traced_peak_mb: float
    rss_before_mb: float
    rss_after_mb: float


def _rss_mb() -> float:
    """The process's peak resident set so far, in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def measure_here(db: Path, vector_file: Path, question: str) -> PeakMemory:
    vectors = np.load(vector_file).reshape(1, -1)
    embedder = PrecomputedEmbedder(EmbedderId(model_id=MODEL_ID, dims=DIMS), [question], vectors)
    with SQLiteBackend(db, FixedClock(NOW)) as backend:
        stores = backend.stores()
        before = _rss_mb()
        tracemalloc.start()
        recall(
            SCOPE,
            RecallQuery(text=question),
            stores=stores,
            embedder=embedder,
            clock=FixedClock(NOW),
            journal=False,
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return PeakMemory(peak / 2**20, before, _rss_mb())


def measure_in_subprocess(
    db: Path, vector_file: Path, question: str, *, build: bool = False
) -> PeakMemory:
    """Run ``measure_here`` in a new interpreter, so nothing else inflates its peak; with
    ``build``, the store's persisted index snapshots are removed first, so the recall builds
    the scope's index (and writes its snapshot) instead of mapping it."""
    if build:
        shutil.rmtree(snapshot_folder_of(db), ignore_errors=True)
    completed = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "benchmarks.speed_memory", str(db), str(vector_file), question],
        capture_output=True,
        text=True,
        check=True,
    )
    return PeakMemory(**json.loads(completed.stdout))


def main() -> int:
    db, vector_file, question = sys.argv[1:4]
    peak = measure_here(Path(db), Path(vector_file), question)
    print(json.dumps(peak.__dict__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
