"""The history channel's overhead: rolling a conversation up, and assembling its boot window.

    python -m benchmarks.history [--quick] [--no-write]

Each LoCoMo dev conversation (all its sessions, in order) is appended as one cairn session to
an embedded SQLite store (each turn ``USER: <speaker>: <text>``, stamped a second apart within
its LoCoMo session's date), then:

- rolled up by ``cairn.history.roll_up_session`` with the offline heuristic model (the
  extractive responder), timed whole: reading the turns, one model call per chunk, the puts;
- its boot window read by ``cairn.history.boot_window.read_window`` at several budgets, timed
  (median and p95 of repeated reads), with what it holds: tokens against the whole history's,
  turns shown verbatim, chunks shown per level.

Then the recall axes at scale: 10,000 records (``valid_from`` a day apart, each with a
``relates_to`` edge to an earlier one) in the same store beside those conversations, and
``by_period`` (one month; every kind, and records only) and ``neighbors`` (out and in) timed on
them by a scan and through the head index, and ``recall_both`` over records, turns and chunks.

Tokens are cairn's estimate (UTF-8 bytes / 4) throughout. A full run writes the ``history``
section of docs/benchmarks.md; ``--quick`` takes two conversations and writes nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks import report
from benchmarks.locomo import Conversation, default_data_path, load_conversations
from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock, SystemClock
from cairn.history import roll_up_session
from cairn.history.axes import about_time, by_period, neighbors
from cairn.history.boot_window import BootWindow, read_window
from cairn.history.search import recall_both
from cairn.local import offline_model
from cairn.models import Conversational, Edge, EdgeKind, EventInput, Role, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall.index.heads import heads_of
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import RecallQuery
from cairn.rollout.index import estimate_tokens
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder

BUDGETS = (1000, 2000, 4000, 8000)
READS = 15
AXIS_RECORDS = 10_000
AXIS_RUNS = 7
SCOPE = Scope(memory_id="bench-history", actor_id="locomo")


def _append(
    stores: Stores, conversation: Conversation, session_id: str, dia_of: dict[str, str]
) -> int:
    """Append every turn (noting each event's LoCoMo dia id in ``dia_of``); returns the
    history's tokens as a raw transcript would cost."""
    tokens = 0
    for i, turn in enumerate(conversation.turns):
        text = f"{turn.speaker}: {turn.text}"
        tokens += estimate_tokens(f"USER: {text}") + 1
        event = stores.events.append(
            SCOPE,
            EventInput(
                session_id=session_id,
                event_timestamp=turn.session_at + timedelta(seconds=i),
                payload=(Conversational(role=Role.USER, text=text),),
            ),
        )
        dia_of[event.event_id] = turn.dia_id
    return tokens


def _window_row(stores: Stores, session_id: str, budget: int) -> tuple[BootWindow, list[float]]:
    assert stores.chunks is not None
    times = []
    window = None
    for _ in range(READS):
        began = time.perf_counter()
        window = read_window(stores.events, stores.chunks, SCOPE, session_id, budget)
        times.append((time.perf_counter() - began) * 1000)
    assert window is not None
    return window, times


def run(conversations: Sequence[Conversation], workdir: Path, records: int) -> str:
    clock = FixedClock(datetime(2030, 1, 1, tzinfo=UTC))
    model = offline_model()
    rollup_rows: list[list[object]] = []
    window_rows: list[list[object]] = []
    dia_of: dict[str, str] = {}
    with SQLiteBackend(workdir / "history.db", clock) as backend:
        stores = backend.stores()
        assert stores.chunks is not None
        for conversation in conversations:
            session_id = conversation.sample_id.replace(" ", "-")
            raw_tokens = _append(stores, conversation, session_id, dia_of)
            began = time.perf_counter()
            rolled = roll_up_session(
                stores.events, stores.chunks, model, SCOPE, session_id, clock=clock, max_calls=1000
            )
            seconds = time.perf_counter() - began
            chunk_tokens = sum(
                estimate_tokens(c.summary) for c in stores.chunks.list_chunks(SCOPE, session_id)
            )
            rollup_rows.append(
                [
                    session_id,
                    len(conversation.turns),
                    f"{raw_tokens:,}",
                    ", ".join(f"L{k} {v}" for k, v in sorted(rolled.written.items())),
                    f"{chunk_tokens:,}",
                    f"{seconds * 1000 / max(1, rolled.chunks):.1f}",
                    f"{seconds:.2f}",
                ]
            )
            for budget in BUDGETS:
                window, times = _window_row(stores, session_id, budget)
                levels = [item.level for item in window.items]
                shown = ", ".join(
                    f"L{level} {levels.count(level)}" for level in sorted(set(levels) - {0})
                )
                window_rows.append(
                    [
                        session_id,
                        budget,
                        f"{window.tokens:,} ({window.tokens / raw_tokens:.1%})",
                        levels.count(0),
                        shown or "-",
                        window.omitted_turns,
                        f"{statistics.median(times):.1f}",
                        f"{sorted(times)[int(0.95 * (len(times) - 1))]:.1f}",
                    ]
                )
        time_rows = _time_aware(stores, conversations, dia_of)
        axis_rows = _axes(stores, records) if records else []
    return _render(rollup_rows, window_rows, time_rows, axis_rows, records)


def _time_aware(
    stores: Stores, conversations: Sequence[Conversation], dia_of: dict[str, str]
) -> list[list[object]]:
    """For the questions that name a period: do that period's turns hold their evidence?"""
    from benchmarks.locomo import CATEGORY_NAMES

    by_category: dict[str, list[tuple[bool, int]]] = {}
    for conversation in conversations:
        session_id = conversation.sample_id.replace(" ", "-")
        scope_now = max(t.session_at for t in conversation.turns) + timedelta(days=1)
        for question in conversation.questions:
            hits = about_time(
                stores.records,
                stores.events,
                stores.chunks,
                SCOPE,
                question.text,
                now=scope_now,
                kinds=frozenset({"turns"}),
                limit=1000,
            )
            if not hits:
                continue
            found = {dia_of.get(h.ref) for h in hits if h.session_id == session_id}
            hit = bool(question.evidence & found)
            name = CATEGORY_NAMES.get(question.category, str(question.category))
            by_category.setdefault(name, []).append((hit, len(found)))
    rows: list[list[object]] = []
    total = sum(len(q.questions) for q in conversations)
    for name, results in sorted(by_category.items()):
        rows.append(_time_row(name, results))
    every = [r for results in by_category.values() for r in results]
    rows.append(_time_row(f"all ({len(every)} of {total} questions name a period)", every))
    return rows


def _time_row(name: str, results: list[tuple[bool, int]]) -> list[object]:
    hits = sum(1 for hit, _ in results if hit)
    turns = statistics.median(n for _, n in results) if results else 0
    return [name, len(results), f"{hits / max(1, len(results)):.1%}", f"{turns:.0f}"]


def _axes(stores: Stores, count: int) -> list[list[object]]:
    """``count`` records a day apart, each linked to an earlier one; then time the axes, by a
    scan and through the head index, and one recall over records, turns and chunks."""
    rng = random.Random(15)
    ids: list[str] = []
    day0 = datetime(2023, 1, 1, tzinfo=UTC)
    embedder = HashingEmbedder()
    for start in range(0, count, 16):
        batch = []
        texts = [
            f"Synthetic fact number {i} about topic {i % 97}"
            for i in range(start, min(count, start + 16))
        ]
        vectors = embedder.embed(texts)
        for j, i in enumerate(range(start, min(count, start + 16))):
            edges = (Edge(kind=EdgeKind.RELATES_TO, target=rng.choice(ids)),) if ids else ()
            batch.append(
                NewRecord(
                    namespace="/facts/locomo/",
                    content=texts[j],
                    sources=(Source(kind=SourceKind.USER),),
                    valid_from=day0 + timedelta(days=i % 1500),
                    edges=edges,
                    vector=Vector(
                        embedder=embedder.identity, values=tuple(float(x) for x in vectors[j])
                    ),
                )
            )
        written = stores.records.apply(SCOPE, [Create(record=r) for r in batch])
        ids += [v.record_id for v in written]
    month = (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 31, tzinfo=UTC))
    heads = heads_of(stores)
    period = (stores.records, stores.events, stores.chunks, SCOPE, *month)
    records_only = frozenset({"records"})
    probe = ids[len(ids) // 2]
    calls: list[tuple[str, object]] = [
        (
            "by_period: one month, records + turns + chunks, scan",
            lambda: by_period(*period, limit=1000),
        ),
        (
            "by_period: one month, records + turns + chunks, head index",
            lambda: by_period(*period, limit=1000, heads=heads),
        ),
        (
            "by_period: one month, records only, scan",
            lambda: by_period(*period, kinds=records_only, limit=1000),
        ),
        (
            "by_period: one month, records only, head index",
            lambda: by_period(*period, kinds=records_only, limit=1000, heads=heads),
        ),
        (
            "neighbors: one record, out and in, scan",
            lambda: neighbors(stores.records, SCOPE, probe),
        ),
        (
            "neighbors: one record, out and in, head index",
            lambda: neighbors(stores.records, SCOPE, probe, heads=heads),
        ),
    ]
    rows: list[list[object]] = []
    for name, call in calls:
        times, found = _timed(call)
        rows.append([name, found, *times])
    passages = PassageIndex()
    query = RecallQuery(text="what did Caroline say about the adoption agency in May 2023?")

    def both() -> tuple[object, ...]:
        return recall_both(
            SCOPE, query, stores=stores, embedder=embedder, clock=SystemClock(), index=passages
        ).hits

    began = time.perf_counter()
    hits = len(both())
    first = (time.perf_counter() - began) * 1000
    rows.append(
        [
            "recall_both: records + turns + chunks, first call (embeds every passage)",
            hits,
            f"{first:.0f}",
            f"{first:.0f}",
        ]
    )
    times, hits = _timed(both)
    rows.append(["recall_both: records + turns + chunks, warm", hits, *times])
    return rows


def _timed(call: object) -> tuple[list[str], int]:
    assert callable(call)
    times, result = [], 0
    for _ in range(AXIS_RUNS):
        began = time.perf_counter()
        result = len(call())
        times.append((time.perf_counter() - began) * 1000)
    return [f"{statistics.median(times):.1f}", f"{max(times):.1f}"], int(result)


def _render(
    rollup_rows: list[list[object]],
    window_rows: list[list[object]],
    time_rows: list[list[object]],
    axis_rows: list[list[object]],
    records: int,
) -> str:
    lines = [
        "## History: rollup and boot window",
        "",
        f"- command: `python -m benchmarks.history`; date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        *[f"- {fact}" for fact in report.machine_facts()],
        "- data: each LoCoMo dev conversation appended as one session of the embedded SQLite "
        "store; rollup by the offline heuristic model (extractive), ten turns a level-1 chunk, "
        "ten chunks a level up; tokens estimated as UTF-8 bytes / 4",
        "",
        "### Rollup (offline model)",
        "",
        report.table(
            [
                "conversation",
                "turns",
                "raw tokens",
                "chunks written",
                "summary tokens",
                "ms per chunk",
                "total s",
            ],
            rollup_rows,
        ),
        "",
        f"### Boot window (read from the store: every event and chunk of the session; {READS} "
        "reads each)",
        "",
        report.table(
            [
                "conversation",
                "budget tokens",
                "window tokens (of raw)",
                "turns verbatim",
                "summaries shown",
                "turns beyond",
                "median ms",
                "p95 ms",
            ],
            window_rows,
        ),
    ]
    lines += [
        "",
        "### Time-aware history recall (`about_time`, turns only)",
        "",
        'Questions that name a period ("in May 2023", "last week"; resolved against the '
        "day after the conversation's last session): does that period's turns hold at least "
        "one of the question's evidence turns, and how many turns does the period return? "
        "Questions that name no period are not counted (`about_time` returns nothing for them).",
        "",
        report.table(["category", "questions", "evidence in period", "median turns"], time_rows),
    ]
    if axis_rows:
        lines += [
            "",
            f"### Recall axes at {records:,} records ({AXIS_RUNS} runs each)",
            "",
            "The store also holds the conversations above as turns and chunks. A scan reads "
            "every live head (and, for records + turns + chunks, every session's events and "
            "chunks); the head index (`cairn.recall.index.heads`) keeps the live heads by date "
            "and by link target, current by the store's generations, so its first call builds "
            "it (the max) and later ones do not. `recall_both` ranks records (recall index), "
            "turns and chunks (passage index) together; the records carry vectors of the "
            "hashing embedder (cairn.testing), which stands in for MiniLM so the figure is the "
            "pipeline's, not the model's (a MiniLM query embedding adds a few ms; embedding the "
            "passages the first time costs what embedding that many texts costs).",
            "",
            report.table(["call", "results", "median ms", "max ms"], axis_rows),
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.history", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two conversations; no writes")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    conversations, _ = load_conversations(default_data_path())
    chosen = conversations[:2] if args.quick else conversations
    with tempfile.TemporaryDirectory(prefix="cairn-history-") as workdir:
        markdown = run(chosen, Path(workdir), 500 if args.quick else AXIS_RECORDS)
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown, "history")
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
