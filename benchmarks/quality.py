"""Retrieval quality on the LoCoMo dev split: ``python -m benchmarks.quality [--quick]``.

Turn-level retrieval, one index per conversation, each turn indexed as
``[session date] speaker: text``, questions of categories 1-4. Prints the results and writes
them to ``docs/benchmarks.md`` (a full run only, unless ``--no-write``). The long steps
(embedding, recall under every policy) show bars on stderr when it is a terminal, unless
``--quiet``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import report
from benchmarks.adversarial import measure_adversarial, render_adversarial
from benchmarks.locomo import (
    DATA_ENV,
    CleaningReport,
    Conversation,
    default_data_path,
    load_conversations,
)
from benchmarks.policies import ablation_policies, fusion_knob_policies, sweep_policies
from benchmarks.retrieval import Prepared, Retriever, rank_bm25, rank_cosine, rank_fusion
from benchmarks.scoring import Outcome, by_category, judge
from benchmarks.sections import Run, engine_runs, render_engine, render_runs
from benchmarks.sections_ideas import render_ablation, render_budgets, render_fusions
from benchmarks.sweep import measure
from benchmarks.vectors import CACHE_DIR, embed_all
from cairn.embed.onnx import OnnxEmbedder

BASELINES: dict[str, Retriever] = {
    "BM25": rank_bm25,
    "MiniLM cosine": rank_cosine,
    "RRF(BM25, cosine)": rank_fusion,
}


def evaluate(name: str, retriever: Retriever, prepared: Sequence[Prepared]) -> Run:
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    for item in prepared:
        ranked = retriever(item)
        outcomes += [
            judge(q, ids) for q, ids in zip(item.conversation.questions, ranked, strict=True)
        ]
    return Run(name, by_category(outcomes), time.perf_counter() - started)


def foreign_questions(conversations: Sequence[Conversation]) -> dict[str, list[str]]:
    """For each conversation, the questions of the next one in the file (cyclically)."""
    if len(conversations) < 2:
        return {}
    return {
        c.sample_id: [q.text for q in conversations[(i + 1) % len(conversations)].questions]
        for i, c in enumerate(conversations)
    }


def prepare(
    data: Path, *, quick: bool, use_cache: bool, quiet: bool = False
) -> tuple[list[Prepared], dict[str, list[str]], dict[str, str]]:
    conversations, cleaning = load_conversations(data)
    foreign = foreign_questions(conversations)
    if quick:
        conversations = conversations[:1]
    embedder = OnnxEmbedder()
    turns = [t.indexed_text for c in conversations for t in c.turns]
    questions = [q.text for c in conversations for q in c.questions]
    turn_vectors, turn_seconds = embed_all(
        embedder, turns, use_cache=use_cache, label="embedding turns", quiet=quiet
    )
    question_vectors, question_seconds = embed_all(
        embedder, questions, use_cache=use_cache, label="embedding questions", quiet=quiet
    )
    prepared: list[Prepared] = []
    t_at = q_at = 0
    for c in conversations:
        t_end, q_end = t_at + len(c.turns), q_at + len(c.questions)
        prepared.append(Prepared(c, turn_vectors[t_at:t_end], question_vectors[q_at:q_end]))
        t_at, q_at = t_end, q_end
    facts = _data_facts(conversations, cleaning, len(turns), len(questions))
    facts["embedding"] = _embedding_fact(len(turns), turn_seconds, question_seconds)
    return prepared, foreign, facts


def _data_facts(
    conversations: Sequence[Conversation], cleaning: CleaningReport, turns: int, questions: int
) -> dict[str, str]:
    dropped = cleaning.malformed + cleaning.unknown
    return {
        "data": (
            f"{len(conversations)} conversations, {turns} turns, {questions} questions "
            f"(categories 1-4)"
        ),
        "evidence cleaning": (
            f"{cleaning.evidence_ids} evidence ids in the whole file, {len(cleaning.malformed)} "
            f"malformed and {len(cleaning.unknown)} naming no turn dropped "
            f"({', '.join(sorted(dropped)) or 'none'}); "
            f"{cleaning.questions_without_evidence} questions left without evidence skipped"
        ),
    }


def _embedding_fact(turns: int, turn_s: float | None, question_s: float | None) -> str:
    if turn_s is None or question_s is None:
        return f"vectors read from the cache in {CACHE_DIR} (use --no-cache to time embedding)"
    return (
        f"all-MiniLM-L6-v2 int8 ONNX, {turns} turns in {turn_s:.1f} s "
        f"({turns / turn_s:.0f} turns/s, batches of 32); questions in {question_s:.1f} s"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one conversation; writes nothing")
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"locomo-dev.json (default: ${DATA_ENV} or ../shared)",
    )
    parser.add_argument("--no-cache", action="store_true", help=f"do not use {CACHE_DIR}")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--quiet", action="store_true", help="no progress bars on stderr")
    parser.add_argument(
        "--no-sweep", action="store_true", help="measure cairn recall with its defaults only"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    data = args.data or default_data_path()
    if not data.is_file():
        print(f"LoCoMo data not found at {data}; pass --data or set ${DATA_ENV}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    prepared, foreign, facts = prepare(
        data, quick=args.quick, use_cache=not args.no_cache, quiet=args.quiet
    )
    runs = [evaluate(name, retriever, prepared) for name, retriever in BASELINES.items()]
    swept = sweep_policies()
    if args.no_sweep:
        swept = {"defaults": swept["defaults"]}
    policies = {**ablation_policies(), **fusion_knob_policies(), **swept}
    engine = measure(prepared, OnnxEmbedder(), policies, foreign, quiet=args.quiet)
    runs += engine_runs(engine)
    adversarial = measure_adversarial(
        data,
        OnnxEmbedder(),
        BASELINES,
        limit=len(prepared),
        use_cache=not args.no_cache,
        quiet=args.quiet,
    )
    given = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(["python -m benchmarks.quality", *given])
    header = [
        "## Quality: turn retrieval on the LoCoMo dev split",
        "",
        f"- command: `{command}`",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        *(f"- {line}" for line in report.machine_facts()),
        *(f"- {key}: {value}" for key, value in facts.items()),
        f"- total wall time: {time.perf_counter() - started:.0f} s",
        "",
    ]
    sections = [
        render_runs(runs),
        render_ablation(engine),
        render_fusions(engine),
        render_budgets(engine),
        render_adversarial(adversarial),
        render_engine(engine, list(swept)),
    ]
    markdown = "\n".join(header) + "\n" + "\n".join(sections)
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown)
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
