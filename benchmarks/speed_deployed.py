"""The deployed recall path: ``python -m benchmarks.speed_deployed [--quick]``.

1. Recall over DynamoDB + S3 on moto (``speed_moto``): requests per recall before and after the
   recall index objects, times on moto (not AWS), and an estimate of AWS read units and dollars
   per recall from the request counts, DynamoDB's billing rules and ``cost_prices``.
2. RetrieveMemoryRecords through ``cairn serve`` with the real boto3 client (``speed_http``),
   beside the library recall and the floor, all in the same run.

Writes the ``speed_deployed`` section of docs/benchmarks.md (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import report, synthetic
from benchmarks.cost_prices import PRICES, RECORDED_ON
from benchmarks.moto_seed import SEEDING
from benchmarks.speed_http import HttpSize
from benchmarks.speed_http import measure as measure_http
from benchmarks.speed_moto import WAYS, MotoSize
from benchmarks.speed_moto import measure as measure_moto
from benchmarks.speed_recall import real_and_stretched
from benchmarks.timing import time_each
from cairn.embed.onnx import OnnxEmbedder
from cairn.ports import FloatMatrix, FloatVector
from cairn.recall.cosines import unit_rows

FULL = {"moto": {1_000: 5, 10_000: 2, 100_000: 1}, "http": {1_000: 30, 10_000: 15}}
# The whole-scope read ('before') is measured up to this many records (at 100,000 it would be
# some 1,100 requests and many minutes on moto a recall; its count is linear, see the table).
BEFORE_UP_TO = 10_000
QUICK = {"moto": {200: 3}, "http": {200: 5}}
QUESTIONS = 40
# Typical item sizes (docs/dynamodb.md): a head ~1.0 KB; a version item bringing a 384-d
# vector ~2.5 KB (one read unit each, under 4 KB).
HEAD_KB = 1.0
# After a write: the records it changed, and the read units of the feed's Query (up to 100
# change items of under 0.2 KB before the object's change, read strongly consistent).
CHANGED = 1
FEED_RRU = math.ceil(100 * 0.2 / 4)


def read_units(way: str, records: int) -> float:
    """Estimated read units of one recall's reads (the journal's write aside), by DynamoDB's
    rules: a strongly consistent read 1 RRU per 4 KB, eventually consistent half, BatchGetItem
    1 RRU per item under 4 KB. Not metered: moto does not meter."""
    if way == "before":  # live GSI (eventually consistent) + one vector item per head
        return math.ceil(records * HEAD_KB / 4) * 0.5 + records
    if way in ("cold", "warm"):
        return 1  # the generation item
    # after a write, caught up with the change feed (one record changed), every read strongly
    # consistent: the generation, the quarantine list, the feed's sequence, the feed's items
    # from the one holding the object's change (at most MAX_CHANGES_PER_ITEM items back, each
    # under 0.2 KB), the changed head and its vector item, the generation again after the put.
    # None of it grows with the records of the scope.
    return 1 + 1 + 1 + FEED_RRU + CHANGED * 2 + 1


def dollars_per_thousand(way: str, records: int) -> float:
    rru = read_units(way, records) * 1000
    cost = PRICES["dynamodb.rru"].cost(rru)
    if way != "warm":
        cost += PRICES["s3.get"].cost(1000)
    if way.endswith("after a write"):
        cost += PRICES["s3.put"].cost(1000)
    return cost


def render(moto: list[MotoSize], http: list[HttpSize], floors: dict[int, float], meta: str) -> str:
    lines = [
        "### Recall over DynamoDB + S3, on moto (not AWS)",
        "",
        meta,
        "",
        "moto serves DynamoDB and S3 in process: its times measure the library and the "
        "requests' work here, not AWS latency; the request counts carry over. Read units and "
        "dollars are estimates from those counts, DynamoDB's billing rules and the typical item "
        f"sizes in docs/dynamodb.md, at the prices in `benchmarks/cost_prices.py` (recorded "
        f"{RECORDED_ON}). Each recall writes its journal entry (the chained journal: a GetItem "
        "of the chain head and a TransactWriteItems, the same before and after; not in the "
        "read units). 'after a write': another process "
        "wrote one record first (so the scope grows by one record a run) and the warm process "
        "catches its index object up with the scope's change feed, then rewrites it; 'cold "
        "after a write': the same, in a fresh process that downloads the object first. "
        "moto deep-copies the "
        "whole table for every item of a TransactWriteItems (the journal's), so its times grow "
        "with the table whatever recall reads; here its transactions keep only the items they "
        "name for their rollback (`benchmarks/moto_rollback.py`: the same requests and "
        f"answers). Seeding: {SEEDING}. 'before' (the whole-scope read) is measured up to "
        f"{BEFORE_UP_TO:,} records.",
        "",
        "| records | way | requests per recall | moto median ms | p95 | ÷ floor | est. RRU | "
        "est. $ per 1,000 recalls |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in moto:
        floor = floors[size.records]
        for name in WAYS:
            way = size.ways[name]
            if not way.samples:
                continue
            by_api = ", ".join(f"{op} {n}" for op, n in sorted(way.requests.items()))
            anchor = f'<a id="deployed-{size.records}-{name.replace(" ", "-")}"></a>'
            lines.append(
                f"| {anchor}{size.records:,} | {name} | {sum(way.requests.values())}: {by_api} | "
                f"{way.timing.median:.1f} | {way.timing.p95:.1f} | "
                f"{way.timing.median / floor:.1f}x | {read_units(name, size.records):,.1f} | "
                f"${dollars_per_thousand(name, size.records):.5f} |"
            )
    lines.append("")
    lines.append(
        "Floor (same run): the query's ONNX embedding plus one pass over the unit matrix: "
        + ", ".join(f"{r:,} records {f:.1f} ms" for r, f in sorted(floors.items()))
        + ". Index object in S3: "
        + ", ".join(f"{s.records:,} records {s.object_bytes / 2**20:.1f} MiB" for s in moto)
        + " (downloaded whole by a cold process, and written whole by every catch-up: the "
        "bytes still grow with the scope, the requests and read units do not)."
    )
    lines += [
        "",
        "### RetrieveMemoryRecords through `cairn serve`",
        "",
        "A real `cairn serve` (SQLite, ONNX embedder, loopback) and the real boto3 "
        "`bedrock-agentcore` client on one reused connection, shipped defaults (no topK, "
        "journal written); the library recall on the same file in the bench process; "
        "interleaved.",
        "",
        "| records | runs | Retrieve p50 ms | p95 | library recall p50 ms | floor ms | "
        "Retrieve ÷ library | Retrieve − library ms | results |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for h in http:
        lines.append(
            f'| <a id="deployed-http-{h.records}"></a>{h.records:,} | {h.http.runs} | '
            f"{h.http.median:.1f} | {h.http.p95:.1f} | {h.library.median:.1f} | {h.floor:.1f} | "
            f"{h.http.median / h.library.median:.2f}x | {h.http.median - h.library.median:.1f} | "
            f"{h.results:.1f} |"
        )
    return "\n".join(lines)


def _one_pass(vectors: FloatMatrix, query: FloatVector) -> float:
    """The median time of one pass over the unit matrix of ``vectors``, in ms."""
    matrix = unit_rows(vectors)
    return time_each(lambda _: matrix @ query, 20).median


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed_deployed")
    parser.add_argument("--quick", action="store_true", help="200 records; writes nothing")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--large",
        type=int,
        metavar="N",
        help="moto only, N records, one run a way, without 'before'; writes nothing",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.large:
        sizes = {"moto": {args.large: 1}, "http": {}}
    started, load_at_start = time.perf_counter(), os.getloadavg()[0]
    onnx = OnnxEmbedder()
    largest = max([*sizes["moto"], *sizes["http"]])
    facts = synthetic.facts(largest)
    vectors = real_and_stretched(onnx, facts, True)
    questions = synthetic.questions(QUESTIONS)
    query = onnx.embed(questions[:1])[0]
    embedding = time_each(lambda i: onnx.embed([questions[i % QUESTIONS]]), 20).median
    floors = {size: embedding + _one_pass(vectors[:size], query) for size in sizes["moto"]}
    print("speed_deployed: moto", file=sys.stderr)
    before_up_to = 0 if args.large else BEFORE_UP_TO
    moto = measure_moto(facts, vectors, onnx, questions, sizes["moto"], before_up_to=before_up_to)
    http: list[HttpSize] = []
    if sizes["http"]:
        print("speed_deployed: cairn serve", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="cairn-deployed-") as workdir:
            http = measure_http(Path(workdir), facts, vectors, onnx, questions, sizes["http"])
    given = list(sys.argv[1:] if argv is None else argv)
    meta = (
        f"- command: `{' '.join(['python -m benchmarks.speed_deployed', *given])}`\n"
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{time.perf_counter() - started:.0f} s, a 2-core machine shared with other work "
        f"(1-minute load average {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} "
        "at the end)"
    )
    markdown = render(moto, http, floors, meta)
    print(markdown)
    if not (args.quick or args.no_write or args.large):
        report.write_section(markdown, "speed_deployed")
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
