"""Speed and scale of the paths a user waits on: ``python -m benchmarks.speed [--quick]``.

Recall at 1k, 10k and 100k records in one scope (``speed_recall``) beside the floor measured in
the same run, the first recall in a fresh process and ``cairn recall`` as a whole process
(``speed_first``), peak memory of a recall at the largest size (``speed_memory``), event
append, rendering and formation (``speed_paths``) on the embedded SQLite store; request counts
on DynamoDB served by moto (``speed_dynamodb``).
Writes the speed section of ``docs/benchmarks.md`` and ``docs/img/recall-latency.png``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks import report, synthetic
from benchmarks.plot import plot_latency
from benchmarks.speed_dynamodb import count_paths
from benchmarks.speed_first import first_recall
from benchmarks.speed_memory import measure_in_subprocess
from benchmarks.speed_paths import time_appends, time_formation, time_rendering
from benchmarks.speed_recall import (
    NOW,
    PrecomputedEmbedder,
    break_down,
    fill,
    real_and_stretched,
    time_recalls,
)
from benchmarks.speed_report import SpeedRun, render_recall_only, render_speed
from cairn.clock import FixedClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.store.sqlite import SQLiteBackend

FULL_RUNS = {1_000: 40, 10_000: 40, 100_000: 20}
QUICK_RUNS = {1_000: 15, 10_000: 5}
QUESTIONS = 40
DYNAMODB_RECORDS = {True: 200, False: 1_000}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k and 10k only; writes nothing")
    parser.add_argument("--no-cache", action="store_true", help="embed the 1k facts afresh")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        help="comma-separated record counts to time (of 1000, 10000, 100000); writes nothing",
    )
    parser.add_argument(
        "--runs", type=int, default=None, help="recalls each way at every size (with --sizes)"
    )
    parser.add_argument(
        "--recall-only",
        action="store_true",
        help="time warm recall and its floor only (no first recall, memory, paths, DynamoDB)",
    )
    return parser.parse_args(argv)


def _sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    unknown = [size for size in sizes if size not in FULL_RUNS]
    if not sizes or unknown:
        raise argparse.ArgumentTypeError(
            f"sizes must be some of {', '.join(map(str, FULL_RUNS))}; got {text!r}"
        )
    return sizes


def run(
    quick: bool,
    use_cache: bool,
    workdir: Path,
    sizes: Sequence[int] | None = None,
    recall_only: bool = False,
    runs_each: int | None = None,
) -> SpeedRun:
    runs = QUICK_RUNS if quick else FULL_RUNS
    if sizes is not None:
        runs = {size: runs_each or FULL_RUNS[size] for size in sizes}
    largest = max(runs)
    onnx = OnnxEmbedder()
    facts = synthetic.facts(largest)
    vectors = real_and_stretched(onnx, facts, use_cache)
    questions = synthetic.questions(QUESTIONS)
    precomputed = PrecomputedEmbedder(onnx.identity, questions, onnx.embed(questions))
    db = workdir / "speed.db"
    result = SpeedRun(quick=quick)
    with SQLiteBackend(db, FixedClock(NOW)) as backend:
        stores = backend.stores()
        written = 0
        for size in sorted(runs):
            began = time.perf_counter()
            fill(stores, onnx.identity, facts, vectors, (written, size))
            result.fill_seconds[size] = time.perf_counter() - began
            result.fill_records[size] = size - written
            written = size
            print(f"speed: {size:,} records written; timing recall", file=sys.stderr)
            if recall_only:
                result.sizes.append(
                    time_recalls(stores, size, questions, onnx, precomputed, runs[size], vectors)
                )
                continue
            result.first.append(first_recall(db, questions[0], size))
            result.sizes.append(
                time_recalls(stores, size, questions, onnx, precomputed, runs[size], vectors)
            )
            result.breakdowns.append(break_down(stores, size, questions[1], precomputed))
            if size == min(runs):
                result.appends = time_appends(stores, 200, 2_000)
                result.rendering = time_rendering(stores, precomputed, questions[0], 500)
                result.formation = time_formation(stores, onnx, 20)
    if recall_only:
        return result
    vector_file = workdir / "question.npy"
    np.save(vector_file, precomputed.embed([questions[0]])[0])
    result.memory_records = largest
    result.memory_build = measure_in_subprocess(db, vector_file, questions[0], build=True)
    result.memory = measure_in_subprocess(db, vector_file, questions[0])
    print("speed: counting DynamoDB requests on moto", file=sys.stderr)
    result.dynamodb_records = DYNAMODB_RECORDS[quick]
    result.dynamodb = count_paths(
        facts, vectors, precomputed, questions[0], result.dynamodb_records
    )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cairn-speed-") as workdir:
        result = run(
            args.quick, not args.no_cache, Path(workdir), args.sizes, args.recall_only, args.runs
        )
    result.seconds = time.perf_counter() - started
    given = list(sys.argv[1:] if argv is None else argv)
    result.command = " ".join(["python -m benchmarks.speed", *given])
    result.date = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    partial = args.sizes is not None or args.recall_only
    write = not (args.quick or args.no_write or partial)
    image = plot_latency(result.sizes) if write else None
    markdown = render_recall_only(result) if args.recall_only else render_speed(result, image)
    print(markdown)
    if write:
        report.write_section(markdown, "speed")
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
