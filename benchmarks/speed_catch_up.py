"""Remember, then recall: what a write costs the next recall, with and without the delta.

``python -m benchmarks.speed_catch_up [SIZES...] [--runs N] [--before-runs N]`` fills a SQLite
store to each size with the speed benchmark's records (``speed_recall.fill``), recalls once
(the scope's index is built and its snapshot written), then times ``--runs`` turns of a bot's
loop: write one record (one ``apply``, as ``cairn remember`` writes it), then one shipped
recall (query vector given, so the figure is the engine and the store; journal written).
Two ways, each through its own ``EmbeddedRecallIndex`` over the same store: with the store's
change feed (the index catches up by a delta, ``cairn.recall.index.catch_up``) and without it
(every write costs the next recall a rebuild and a rewrite of the snapshot file, as before).
A warm recall with no write before it is timed beside them. ``--runs`` above the delta's
bound (``catch_up.delta_bound``) shows the one rebuild the bound costs (``max_ms``);
``--before-runs 0`` leaves the rebuilding way out. Prints one JSON object per size,
with the load average; nothing is written to the docs (the figures are quoted by hand in
docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks import synthetic
from benchmarks.speed_recall import (
    NOW,
    SCOPE,
    STARTED,
    PrecomputedEmbedder,
    fill,
    real_and_stretched,
)
from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.models import Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.index import EmbeddedRecallIndex
from cairn.store.sqlite import SQLiteBackend

QUESTIONS = 12
EXTRA = 2_000  # facts beyond the largest size, for the records the loop writes


def _turns(
    stores: Stores,
    index: EmbeddedRecallIndex,
    embedder: PrecomputedEmbedder,
    questions: Sequence[str],
    remember: Callable[[int], None] | None,
    runs: int,
) -> list[float]:
    """Milliseconds of each recall, each after ``remember(i)`` when given."""
    clock = FixedClock(NOW)
    samples: list[float] = []
    for i in range(runs):
        if remember is not None:
            remember(i)
        began = time.perf_counter()
        recall(
            SCOPE,
            RecallQuery(text=questions[i % len(questions)]),
            stores=stores,
            embedder=embedder,
            clock=clock,
            index=index,
        )
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 2),
        "max_ms": round(ordered[-1], 2),
        "runs": len(ordered),
    }


def measure(size: int, runs: int, before_runs: int, workdir: Path) -> dict[str, Any]:
    onnx = OnnxEmbedder()
    facts = synthetic.facts(size + EXTRA)
    vectors = real_and_stretched(onnx, facts, True)
    questions = synthetic.questions(QUESTIONS)
    embedder = PrecomputedEmbedder(onnx.identity, questions, onnx.embed(questions))
    written = iter(range(size, size + EXTRA))

    def remember(stores: Stores) -> Callable[[int], None]:
        def write(_: int) -> None:
            i = next(written)
            record = NewRecord(
                namespace=f"/facts/{SCOPE.actor_id}/",
                content=facts[i],
                sources=(Source(kind=SourceKind.USER, session_id=f"s-{i // 20}"),),
                seen_at=STARTED + timedelta(minutes=i),
                vector=Vector(embedder=onnx.identity, values=tuple(vectors[i].tolist())),
            )
            stores.records.apply(SCOPE, [Create(record=record)])

        return write

    found: dict[str, Any] = {"records": size}
    with SQLiteBackend(workdir / f"catch-up-{size}.db", FixedClock(NOW)) as backend:
        stores = backend.stores()
        fill(stores, onnx.identity, facts, vectors, (0, size))
        generations, snapshots = backend.generations(), stores.index_snapshots
        for name, changes, count in (
            # The delta first: a file the other way writes notes no feed position to catch
            # up from, so its first write would be a rebuild.
            ("delta (after)", stores.changes, runs),
            ("rebuild (before)", None, before_runs),
        ):
            if not count:
                continue
            index = EmbeddedRecallIndex(
                stores.records, generations, snapshots=snapshots, changes=changes
            )
            _turns(stores, index, embedder, questions, None, 1)  # built, or mapped
            warm = _turns(stores, index, embedder, questions, None, count)
            began = time.perf_counter()
            after_write = _turns(stores, index, embedder, questions, remember(stores), count)
            loop = (time.perf_counter() - began) * 1000 / count
            assert index.persisted is not None
            found[name] = {
                "warm recall, no write": _summary(warm),
                "recall after one write": _summary(after_write),
                "remember then recall, per turn ms": round(loop, 2),
                "files published": index.persisted.published,
                "caught up by a delta": index.caught_up,
            }
    found["load average"] = [round(x, 2) for x in os.getloadavg()]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--before-runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            print(json.dumps(measure(size, args.runs, args.before_runs, Path(folder))))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
