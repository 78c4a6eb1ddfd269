"""Recall on the fact set: ``python -m benchmarks.fact_recall [--quick] [--no-write]``.

Short records of the kinds extraction files, across several synthetic users, asked about in
other words (``benchmarks.fact_set``). Reports recall@k on answerable questions (and on those
sharing no word with their answer), the block's precision (how many shown entries answer), and
on no-answer questions how often the block is empty or marked weak. Writes its section of
``docs/benchmarks.md`` on a full run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import report
from benchmarks.fact_engine import KS, FactOutcome, FactResult, measure, write_store
from benchmarks.fact_set import DEFAULT_SEED, build
from benchmarks.policies import fact_policies
from cairn.embed.onnx import OnnxEmbedder
from cairn.recall.query import DEFAULT_TOP_K

SECTION = "fact_recall"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def answerable(outcomes: Sequence[FactOutcome]) -> list[FactOutcome]:
    return [o for o in outcomes if o.kind != "no-answer"]


def recall_at(outcomes: Sequence[FactOutcome], k: int) -> float:
    position = KS.index(k)
    return _mean([o.recall[position] for o in answerable(outcomes)])


def no_answer_ok(outcomes: Sequence[FactOutcome]) -> float:
    """Share of no-answer questions whose block is empty or marked weak."""
    return _mean([float(o.empty_or_weak) for o in outcomes if o.kind == "no-answer"])


def block_precision(outcomes: Sequence[FactOutcome]) -> float:
    """Mean share of shown entries that answer, over answerable questions with a block."""
    return _mean([o.relevant_shown / o.shown for o in answerable(outcomes) if o.shown])


def _kind_row(
    label: str, rows: Sequence[FactOutcome], shipped: Sequence[FactOutcome]
) -> list[object]:
    if not rows:
        return [label, 0, "", "", "", "", "", "", ""]
    answer_rows = answerable(rows)
    if not answer_rows:
        return [
            label,
            len(rows),
            "",
            "",
            "",
            "",
            f"{_mean([o.shown for o in shipped]):.2f}",
            f"{_mean([float(o.weak) for o in shipped]):.1%}",
            f"{no_answer_ok(shipped):.1%}",
        ]
    return [
        label,
        len(rows),
        *(f"{recall_at(rows, k):.3f}" for k in KS),
        f"{block_precision(shipped):.3f}",
        f"{_mean([o.shown for o in shipped]):.2f}",
        f"{_mean([float(o.weak) for o in shipped]):.1%}",
        f"{_mean([float(o.shown == 0) for o in shipped]):.1%}",
    ]


def render(result: FactResult) -> str:
    ranked = result.policies["defaults"]
    shipped = result.shipped
    header = [
        "questions",
        "n",
        *(f"R@{k}" for k in KS),
        "block precision",
        "entries shown",
        "weak",
        "empty (no-answer: empty or weak)",
    ]
    rows = []
    for anchor, label, keep in (
        ("answerable", "answerable", lambda o: o.kind == "answerable"),
        ("superseded", "superseded answer", lambda o: o.kind == "superseded"),
        (
            "disjoint",
            "sharing no word with the answer",
            lambda o: o.kind != "no-answer" and o.disjoint,
        ),
        ("with-answer", "all with an answer", lambda o: o.kind != "no-answer"),
        ("no-answer", "no answer", lambda o: o.kind == "no-answer"),
    ):
        picked = [i for i, o in enumerate(ranked) if keep(o)]
        named = f'<a id="facts-{anchor}"></a>{label}'
        rows.append(_kind_row(named, [ranked[i] for i in picked], [shipped[i] for i in picked]))
    return "\n".join(
        [
            "### cairn recall on the fact set, defaults "
            f"(R@k ranked to 20; block as shipped, top_k {DEFAULT_TOP_K})",
            "",
            report.table(header, rows),
            "",
        ]
    )


def render_sweep(result: FactResult) -> str:
    header = ["policy", *(f"R@{k}" for k in KS), "no-answer: empty or weak", "precision of 8"]
    rows = [
        [
            label,
            *(f"{recall_at(outcomes, k):.3f}" for k in KS),
            f"{no_answer_ok(outcomes):.1%}",
            f"{block_precision(outcomes):.3f}",
        ]
        for label, outcomes in result.policies.items()
    ]
    return "\n".join(
        [
            "### The fact set under one knob changed at a time (ranked to 20; block = top 8)",
            "",
            report.table(header, rows),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fact_recall", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="three users; writes nothing")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--no-cache", action="store_true", help="embed again, not from the cache")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    users = build(args.seed)
    if args.quick:
        users = users[:3]
    embedder = OnnxEmbedder()
    with tempfile.TemporaryDirectory() as folder:
        index = write_store(users, Path(folder) / "facts.db", embedder, use_cache=not args.no_cache)
        result = measure(users, index, embedder, fact_policies())
        index.stores.close()
    given = list(sys.argv[1:] if argv is None else argv)
    questions = len(result.shipped)
    markdown = "\n".join(
        [
            "## Quality: short facts asked about in other words (the fact set)",
            "",
            f"- command: `{' '.join(['python -m benchmarks.fact_recall', *given])}`",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- data: {len(users)} synthetic users, {result.records} records written as "
            f"`cairn remember` writes them (SQLite store), {questions} questions; "
            f"generated from seed {args.seed} "
            "by `benchmarks/fact_set.py`",
            f"- shortcut check: on {result.prefix_violations} of {questions} questions what "
            "`recall` showed was not a prefix of the ranking the R@k columns use",
            f"- total wall time: {time.perf_counter() - started:.0f} s",
            "",
            render(result),
            render_sweep(result),
        ]
    )
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown, SECTION)
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
