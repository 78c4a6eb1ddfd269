"""The link job's (or the reflection job's) cost on a scope of many records: a first run,
then the steady state.

    python -m benchmarks.link_job [--records 10000] [--new 10] [--no-catch-up]
                                  [--job link|reflection]

Writes ``--records`` records (384-dimensional unit vectors around 200 topics, each naming its
topic as an entity) into one scope of an embedded SQLite store, runs the link job
(``cairn.history.linking.run_link_job``, the offline heuristic model) with no bound until it
has caught up (timed, as "catch-up"; with ``--no-catch-up`` one run with the job's own
bounds instead, as a scheduled run would), then times, with the job's own bounds:

- a run with nothing written since the last one (idle once caught up; without catching up
  it continues the first run's backlog);
- a run after ``--new`` records were written (the steady state of a scheduled job: a few
  records every 15 minutes).

With ``--job reflection`` the reflection job (``cairn.history.reflection``, switched on, the
offline model, its insights embedded by a fixed random projection of their words) runs in place
of the link job, the same way; after its catch-up one more run is timed before the idle one (the
catch-up's own writes are news to it).

Each run is timed whole (``time.perf_counter``), in process, with the one-minute load average
beside it. Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import SystemClock
from cairn.history.linking import run_link_job
from cairn.history.reflection import run_reflection_job
from cairn.jobs import JobName, JobSwitches
from cairn.local import offline_model
from cairn.models import EmbedderId, Scope, Source, SourceKind
from cairn.ports import FloatMatrix, Stores
from cairn.store.sqlite import SQLiteBackend

EMBEDDER = EmbedderId(model_id="bench-embedder", dims=384)
SCOPE = Scope(memory_id="bench", actor_id="tg-1")
TOPICS = 200
_SOURCE = Source(kind=SourceKind.MODEL, run_id="run-bench")


def _write(stores: Stores, count: int, rng: np.random.Generator, start: int) -> None:
    centres = np.random.default_rng(7).normal(size=(TOPICS, EMBEDDER.dims))
    changes = []
    for i in range(start, start + count):
        topic = i % TOPICS
        values = centres[topic] + rng.normal(scale=0.6, size=EMBEDDER.dims)
        values /= np.linalg.norm(values)
        record = NewRecord(
            namespace="/facts/tg-1/",
            content=f"fact {i} about topic {topic}",
            sources=(_SOURCE,),
            entities=(f"topic-{topic}",),
            vector=Vector(embedder=EMBEDDER, values=tuple(float(v) for v in values)),
        )
        changes.append(Create(record=record))
        if len(changes) == 16:
            stores.records.apply(SCOPE, changes)
            changes = []
    if changes:
        stores.records.apply(SCOPE, changes)


class _Words:
    """An embedder in the bench's space: each word a fixed random direction, a text their sum."""

    identity = EMBEDDER

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        rows = []
        for text in texts:
            seeds = [sum(map(ord, w)) for w in text.split()] or [0]
            row = sum(np.random.default_rng(s).normal(size=EMBEDDER.dims) for s in seeds)
            rows.append(np.asarray(row) / (np.linalg.norm(row) or 1.0))
        return np.asarray(rows, dtype=np.float32)


def _timed(stores: Stores, job: str, bound: int | None = None) -> tuple[float, str]:
    began = time.perf_counter()
    if job == "reflection":
        bounds = (
            {"max_calls": bound, "max_clusters": bound, "max_flags": bound}
            if bound is not None
            else {}
        )
        run = run_reflection_job(
            stores, offline_model(), "bench", embedder=_Words(), clock=SystemClock(), **bounds
        )
        return time.perf_counter() - began, f"{run.outcome}, {run.changed} change(s)"
    limits = {"max_calls": bound, "max_links": bound} if bound is not None else {}
    run = run_link_job(
        stores, offline_model(), "bench", embedder=EMBEDDER, clock=SystemClock(), **limits
    )
    took = time.perf_counter() - began
    return took, f"{run.outcome}, {run.changed} link(s)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.link_job", description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument(
        "--no-catch-up",
        dest="catch_up",
        action="store_false",
        help="run the first run with the job's own bounds, not until it has caught up",
    )
    parser.add_argument("--job", choices=("link", "reflection"), default="link")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(11)
    job = args.job
    with tempfile.TemporaryDirectory() as folder:
        stores = SQLiteBackend(Path(folder) / "cairn.db", SystemClock()).stores()
        try:
            _write(stores, args.records, rng, 0)
            if job == "reflection":
                assert stores.jobs is not None
                on = JobSwitches(memory_id="bench").switched(JobName.REFLECTION, True)
                stores.jobs.set_switches(on)
            first = ("catch-up (unbounded)", 10**9) if args.catch_up else ("first run", None)
            rows = [(first[0], *_timed(stores, job, first[1]), os.getloadavg()[0])]
            if job == "reflection" and args.catch_up:  # its own writes are the next run's news
                rows.append(("next run", *_timed(stores, job), os.getloadavg()[0]))
            second = "idle run, nothing written" if args.catch_up else "second run, nothing new"
            rows.append((second, *_timed(stores, job), os.getloadavg()[0]))
            _write(stores, args.new, rng, args.records)
            new = f"after {args.new} new records"
            rows.append((new, *_timed(stores, job), os.getloadavg()[0]))
        finally:
            stores.close()
    print(f"{job} job, {args.records} records of {EMBEDDER.dims} dims, SQLite")
    print(f"{'run':<28} {'seconds':>8}  {'load':>5}  outcome")
    for name, took, outcome, load in rows:
        print(f"{name:<28} {took:>8.3f}  {load:>5.2f}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
