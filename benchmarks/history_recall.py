"""Recall over history on LoCoMo dev: what turns and chunks find, and what a named period adds.

    python -m benchmarks.history_recall [--quick] [--no-write]

Each LoCoMo dev conversation is appended as one session of its own scope in an embedded SQLite
store (each turn ``USER: <speaker>: <text>``, stamped a second apart within its LoCoMo
session's date) and rolled up by the offline model (ten turns a level-1 chunk). Then every
question is asked of ``cairn.history.recall_both`` with the real MiniLM embedder, top 10, in
three ways:

- **turns**: turns only, ``temporal_weight = 0`` (similarity alone);
- **turns, time-aware**: turns only, the default policy (a period the question names, resolved
  against the conversation's last turn, lifts the turns inside it);
- **turns + chunks, time-aware**: both, so a summary can stand for the ten turns it covers.

A question is answered at k when one of its evidence turns is among the first k hits, or is
covered by a level-1 chunk among them. Records are not in this run (no extraction): the
records channel's quality is the ``quality`` section. A full run writes the
``history-recall`` section of docs/benchmarks.md; ``--quick`` takes one conversation.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks import report
from benchmarks.locomo import CATEGORY_NAMES, Conversation, default_data_path, load_conversations
from cairn.clock import FixedClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.history import roll_up_session
from cairn.history.axes import Kind
from cairn.history.search import recall_both
from cairn.local import offline_model
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.ports import Stores
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import DEFAULT_POLICY, RecallPolicy, RecallQuery
from cairn.recall.temporal import query_periods
from cairn.store.sqlite import SQLiteBackend

TOP_K = 10
TURNS: frozenset[Kind] = frozenset({"turns"})
BOTH: frozenset[Kind] = frozenset({"turns", "chunks"})
WAYS: tuple[tuple[str, frozenset[Kind], RecallPolicy], ...] = (
    ("turns", TURNS, DEFAULT_POLICY.model_copy(update={"temporal_weight": 0.0})),
    ("turns, time-aware", TURNS, DEFAULT_POLICY),
    ("turns + chunks, time-aware", BOTH, DEFAULT_POLICY),
)


def _load(stores: Stores, scope: Scope, conversation: Conversation) -> dict[str, str]:
    """Append the conversation; returns event id -> LoCoMo dia id."""
    dia_of: dict[str, str] = {}
    for i, turn in enumerate(conversation.turns):
        event = stores.events.append(
            scope,
            EventInput(
                session_id="talk",
                event_timestamp=turn.session_at + timedelta(seconds=i),
                payload=(Conversational(role=Role.USER, text=f"{turn.speaker}: {turn.text}"),),
            ),
        )
        dia_of[event.event_id] = turn.dia_id
    return dia_of


def run(conversations: Sequence[Conversation], workdir: Path) -> str:
    clock = FixedClock(datetime(2030, 1, 1, tzinfo=UTC))
    embedder = OnnxEmbedder()
    index = PassageIndex()
    # (way, category or "names a period") -> hits at 5 and at 10
    results: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    timings: list[float] = []
    with SQLiteBackend(workdir / "history-recall.db", clock) as backend:
        stores = backend.stores()
        assert stores.chunks is not None
        for conversation in conversations:
            scope = Scope(memory_id="bench-history-recall", actor_id=conversation.sample_id)
            dia_of = _load(stores, scope, conversation)
            roll_up_session(
                stores.events,
                stores.chunks,
                offline_model(),
                scope,
                "talk",
                clock=clock,
                max_calls=1000,
            )
            covered = {
                c.chunk_id: {dia_of[e] for e in c.children if e in dia_of}
                for c in stores.chunks.list_chunks(scope, "talk", level=1)
            }
            last = max(t.session_at for t in conversation.turns)
            for question in conversation.questions:
                category = CATEGORY_NAMES.get(question.category, str(question.category))
                groups = [category, "all"]
                if query_periods(question.text, last):
                    groups.append("names a period")
                for name, kinds, policy in WAYS:
                    began = time.perf_counter()
                    found = recall_both(
                        scope,
                        RecallQuery(text=question.text, top_k=TOP_K),
                        stores=stores,
                        embedder=embedder,
                        clock=clock,
                        kinds=kinds,
                        policy=policy,
                        index=index,
                    )
                    timings.append((time.perf_counter() - began) * 1000)
                    reached = [
                        bool(
                            question.evidence
                            & (
                                {dia_of.get(h.ref, "")}
                                if h.kind == "turns"
                                else covered.get(h.ref, set())
                            )
                        )
                        for h in found.hits
                    ]
                    outcome = (any(reached[:5]), any(reached[:TOP_K]))
                    for group in groups:
                        results.setdefault((name, group), []).append(outcome)
    return _render(results, timings, len(conversations))


def _render(
    results: dict[tuple[str, str], list[tuple[bool, bool]]], timings: list[float], count: int
) -> str:
    groups = sorted({g for _, g in results}, key=lambda g: (g in ("all", "names a period"), g))
    rows: list[list[object]] = []
    for group in groups:
        row: list[object] = [group, len(results[(WAYS[0][0], group)])]
        for name, _, _ in WAYS:
            outcomes = results[(name, group)]
            at5 = sum(1 for a, _ in outcomes if a) / len(outcomes)
            at10 = sum(1 for _, b in outcomes if b) / len(outcomes)
            row.append(f"{at5:.1%} / {at10:.1%}")
        rows.append(row)
    return "\n".join(
        [
            "## History recall: turns, chunks and named periods",
            "",
            "- command: `python -m benchmarks.history_recall`; date: "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            *[f"- {fact}" for fact in report.machine_facts()],
            f"- data: {count} LoCoMo dev conversations, each one session of its own scope; "
            "rolled up by the offline model; embedder all-MiniLM-L6-v2 (ONNX); "
            "`cairn.history.recall_both`, top 10",
            "- a question is answered at k when an evidence turn, or a level-1 chunk covering "
            "one, is among the first k hits; cells are answered at 5 / at 10",
            f"- median recall_both {statistics.median(timings):.0f} ms "
            f"(every call, warm and first: each conversation's first call embeds its passages)",
            "",
            report.table(["questions", "count", *(name for name, _, _ in WAYS)], rows),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.history_recall", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="one conversation; no writes")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    conversations, _ = load_conversations(default_data_path())
    chosen = conversations[:1] if args.quick else conversations
    with tempfile.TemporaryDirectory(prefix="cairn-history-recall-") as workdir:
        markdown = run(chosen, Path(workdir))
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown, "history-recall")
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
