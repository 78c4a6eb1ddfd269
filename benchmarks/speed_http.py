"""RetrieveMemoryRecords through ``cairn serve``, beside the library recall and the floor.

A real ``cairn serve`` process (SQLite store, the ONNX embedder, loopback only) and a real boto3
``bedrock-agentcore`` client on one reused connection. The scope is filled from this process
into the same SQLite file (``speed_recall.fill``: the speed benchmark's facts and vectors,
user-sourced, 16 a transaction) and its records placed in the record directory, as the API's
own writes place them; the server sees them through the store's generation on its next call.
Every call asks the shipped defaults (no ``topK``; journal written by both). The
library recall runs in this process on the same file with the same questions; the floor is
the query's ONNX embedding plus one pass over the scope's unit matrix, timed in the same run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.speed_recall import NOW, SESSION_FACTS, STARTED
from benchmarks.timing import Timing, time_each
from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind
from cairn.ports import MAX_PAGE_SIZE, Embedder, FloatMatrix, RecordPlacement, Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.cosines import unit_rows
from cairn.store.sqlite import SQLiteBackend

ACTOR = "user-1"
NAMESPACE = f"/facts/{ACTOR}/"


@dataclass(frozen=True)
class HttpSize:
    records: int
    http: Timing
    library: Timing
    floor: float
    results: float


@contextmanager
def served(store: Path) -> Iterator[str]:
    """``cairn serve`` on a free loopback port over ``store``; its endpoint URL."""
    command = [sys.executable, "-m", "cairn", "serve", "--port", "0", "--store", str(store)]
    process = subprocess.Popen(  # noqa: S603  # our own interpreter and arguments
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ)
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        exports = dict(part.split("=", 1) for part in line.removeprefix("export ").split())
        url = exports["AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"]
        assert url.startswith("http://127.0.0.1:"), url  # loopback only
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def measure(
    workdir: Path,
    facts: Sequence[str],
    vectors: FloatMatrix,
    onnx: Embedder,
    questions: Sequence[str],
    runs: dict[int, int],
) -> list[HttpSize]:
    import boto3
    from botocore.config import Config

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "AKIDCAIRNBENCH")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    session = boto3.session.Session(region_name="us-east-1")
    config = Config(retries={"mode": "standard", "total_max_attempts": 1})
    db = workdir / "http.db"
    found: list[HttpSize] = []
    with served(db) as url:
        control = session.client("bedrock-agentcore-control", endpoint_url=url, config=config)
        memory_id = control.create_memory(
            name="speed",
            eventExpiryDuration=7,
            memoryStrategies=[
                {"semanticMemoryStrategy": {"name": "facts", "namespaceTemplates": [NAMESPACE]}}
            ],
        )["memory"]["id"]
        data = session.client("bedrock-agentcore", endpoint_url=url, config=config)
        scope = Scope(memory_id=memory_id, actor_id=ACTOR)
        with SQLiteBackend(db, FixedClock(NOW)) as backend:
            stores, written = backend.stores(), 0
            for size in sorted(runs):
                _fill(stores, scope, onnx, facts, vectors, (written, size))
                written = size
                found.append(_time(data, stores, scope, onnx, questions, vectors, runs[size]))
    return found


def _fill(
    stores: Stores,
    scope: Scope,
    onnx: Embedder,
    facts: Sequence[str],
    vectors: FloatMatrix,
    span: tuple[int, int],
) -> None:
    """Facts ``span`` as the speed benchmark writes them (``speed_recall.fill``, in ``scope``),
    each placed in the directory as the API's writes place theirs."""
    start, end = span
    for first in range(start, end, MAX_CHANGES_PER_APPLY):
        changes = []
        for i in range(first, min(end, first + MAX_CHANGES_PER_APPLY)):
            source = Source(kind=SourceKind.USER, session_id=f"s-{i // SESSION_FACTS}")
            record = NewRecord(
                namespace=NAMESPACE,
                content=facts[i],
                sources=(source,),
                seen_at=STARTED + timedelta(minutes=i),
                vector=Vector(embedder=onnx.identity, values=tuple(vectors[i].tolist())),
            )
            changes.append(Create(record=record))
        written = stores.records.apply(scope, changes)
        assert stores.directory is not None
        stores.directory.place(
            scope.memory_id,
            [
                RecordPlacement(record_id=v.record_id, actor_id=ACTOR, namespace=NAMESPACE)
                for v in written
            ],
        )


def _time(
    data: Any,
    stores: Stores,
    scope: Scope,
    onnx: Embedder,
    questions: Sequence[str],
    vectors: FloatMatrix,
    runs: int,
) -> HttpSize:
    clock = FixedClock(NOW)
    counts: list[int] = []

    def over_http(i: int) -> None:
        answer = data.retrieve_memory_records(
            memoryId=scope.memory_id,
            namespace=NAMESPACE,
            searchCriteria={"searchQuery": questions[i % len(questions)]},
        )
        counts.append(len(answer["memoryRecordSummaries"]))

    def in_library(i: int) -> None:
        query = RecallQuery(text=questions[i % len(questions)], namespace_prefix=NAMESPACE)
        recall(scope, query, stores=stores, embedder=onnx, clock=clock)

    over_http(0)  # the server builds its index of the scope; the embedder is loaded
    in_library(0)
    http: list[float] = []
    library: list[float] = []
    for i in range(runs):  # interleaved: both see the same load
        for action, samples in ((over_http, http), (in_library, library)):
            started = time.perf_counter()
            action(i)
            samples.append((time.perf_counter() - started) * 1000)
    size = _count(stores, scope)
    matrix = unit_rows(vectors[:size])
    query = onnx.embed(questions[:1])[0]
    embedding = time_each(lambda i: onnx.embed([questions[i % len(questions)]]), max(runs, 20))
    one_pass = time_each(lambda _: matrix @ query, max(runs, 20))
    return HttpSize(
        records=size,
        http=Timing(tuple(http)),
        library=Timing(tuple(library)),
        floor=embedding.median + one_pass.median,
        results=sum(counts) / len(counts),
    )


def _count(stores: Stores, scope: Scope) -> int:
    total, cursor = 0, None
    while True:
        page = stores.records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        total += len(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return total


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.speed_http [--sizes 1000,10000] [--runs N]``: this measurement
    alone, printed (the page's table is written by ``benchmarks.speed_deployed``)."""
    import argparse
    import tempfile

    from benchmarks import report, synthetic
    from benchmarks.speed_recall import real_and_stretched
    from cairn.embed.onnx import OnnxEmbedder

    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed_http")
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated record counts")
    parser.add_argument("--runs", type=int, default=30, help="calls each way at each size")
    args = parser.parse_args(argv)
    sizes = sorted(int(part) for part in args.sizes.split(","))
    onnx = OnnxEmbedder()
    facts = synthetic.facts(max(sizes))
    vectors = real_and_stretched(onnx, facts, True)
    questions = synthetic.questions(40)
    with tempfile.TemporaryDirectory(prefix="cairn-http-") as workdir:
        found = measure(
            Path(workdir), facts, vectors, onnx, questions, dict.fromkeys(sizes, args.runs)
        )
    print(*(f"- {line}" for line in report.machine_facts()), sep="\n")
    for h in found:
        print(
            f"{h.records:,} records: Retrieve p50 {h.http.median:.1f} ms (p95 {h.http.p95:.1f}),"
            f" library recall p50 {h.library.median:.1f} ms, floor {h.floor:.1f} ms,"
            f" Retrieve - library {h.http.median - h.library.median:.1f} ms,"
            f" bar 2 x library + 5 = {2 * h.library.median + 5:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
