"""The quality page's sections: baselines, per-category tables, cairn recall and its sweep."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks import report
from benchmarks.engine import TURN_GAP
from benchmarks.policies import ONE_AT_A_TIME
from benchmarks.scoring import Summary, by_category, summarise
from benchmarks.sweep import FOREIGN_PER_CONVERSATION, EngineResult, PolicyResult
from cairn.recall import DEFAULT_POLICY
from cairn.recall.query import DEFAULT_TOP_K

# The baselines measured when the split was prepared (shared/data/README.md): R@1, 5, 10, 20.
REFERENCE = {
    "BM25": (0.305, 0.513, 0.585, 0.672),
    "MiniLM cosine": (0.205, 0.443, 0.551, 0.646),
    "RRF(BM25, cosine)": (0.293, 0.538, 0.629, 0.695),
}


@dataclass(frozen=True)
class Run:
    name: str
    groups: dict[str, Summary]
    seconds: float


def engine_runs(engine: EngineResult) -> list[Run]:
    depth = engine.policies["defaults"].outcomes
    off = engine.policies["ideas off"].outcomes
    return [
        Run("cairn recall, ideas off, ranked to 20", by_category(off), engine.seconds),
        Run("cairn recall, defaults, ranked to 20", by_category(depth), engine.seconds),
        Run(
            f"cairn recall as shipped (top_k {DEFAULT_TOP_K}, "
            f"{DEFAULT_POLICY.max_block_bytes} B block)",
            by_category(engine.shipped),
            engine.seconds,
        ),
    ]


def render_engine(engine: EngineResult, sweep_labels: Sequence[str]) -> str:
    questions = len(engine.shipped) or 1
    parts = [
        "### cairn recall: how it was run",
        "",
        "- each conversation is one actor's memory in `InMemoryBackend`: one user-sourced record "
        "per turn (content = the indexed text; source = its session and dia_id; entities = its "
        "speaker; first seen at its session's start plus "
        f"{TURN_GAP.total_seconds():.0f} s per earlier turn of the session, since LoCoMo dates "
        "sessions, not turns; MiniLM vector precomputed); questions are asked one day after the "
        "last session",
        f"- as shipped: every default (`RecallQuery(text=...)`, `DEFAULT_POLICY`); "
        f"{sum(engine.shipped_entries) / questions:.1f} entries and "
        f"{sum(engine.shipped_bytes) / questions:.0f} bytes per block on average; "
        f"R@10 and R@20 of that row equal R@{DEFAULT_TOP_K} (it never shows more)",
        f"- end-to-end `recall` latency (journal included, query embedded each time): "
        f"{engine.latency()}",
        "- ranked to 20 and the sweep: the candidate pool (step 1) gathered once per question, "
        "then `cairn.recall.ordering.order` (floor and fusion, context, signals, ranking) and "
        "dedup re-run per policy (the block budget aside)",
        f"- checks: shipped block not a prefix of the ranking in {engine.prefix_violations} of "
        f"{len(engine.shipped)} questions; `recall(top_k=20)` with a wide budget ranked "
        f"differently in {engine.wide_mismatches} of {engine.wide_checked} (both must be 0)",
        "",
        "### Recall policy sweep (defaults except the knob named; ranked to 20)",
        "",
        "defaults: "
        + ", ".join(f"{knob} {DEFAULT_POLICY.knobs()[knob]}" for knob in ONE_AT_A_TIME),
        "",
    ]
    header = ["policy", "R@1", "R@5", "R@10", "R@20", "hit@5", "hit@20"]
    header += ["keyword-only", "dedup/q", "context/q"]
    header += [f"foreign shown/{DEFAULT_TOP_K}", "foreign empty"]
    rows = [
        _policy_row(label, engine.policies[label], questions)
        for label in sweep_labels
        if label in engine.policies
    ]
    parts += [report.table(header, rows), ""]
    parts += [
        "keyword-only: share of questions where no cosine passed the floor and BM25 alone "
        "ranked; dedup/q: candidates dropped as paraphrases per question, before the top 20; "
        "context/q: neighbours context expansion brought back past a floor, per question; "
        f"foreign: {_foreign_count(engine)} questions of another conversation asked of each "
        f"memory (up to {FOREIGN_PER_CONVERSATION} per conversation), entries shown out of "
        f"top_k {DEFAULT_TOP_K} (budget aside) and the share answered with nothing: lower "
        "shown and higher empty mean a floor that keeps unrelated memories out of the prompt.",
        "",
    ]
    return "\n".join(parts)


def _foreign_count(engine: EngineResult) -> int:
    return len(engine.policies["defaults"].foreign_shown)


def _policy_row(label: str, result: PolicyResult, questions: int) -> list[object]:
    s = summarise(result.outcomes)
    foreign = result.foreign_shown or [0]
    return [
        label,
        *s.recall,
        s.hit[1],
        s.hit[3],
        f"{result.keyword_only / questions:.1%}",
        f"{result.deduplicated / questions:.2f}",
        f"{result.contextual / questions:.2f}",
        f"{sum(foreign) / len(foreign):.2f}",
        f"{sum(1 for n in foreign if n == 0) / len(foreign):.0%}",
    ]


def _anchored(name: str) -> str:
    """The row label with a stable anchor the README can link to."""
    anchors = {
        "BM25": "quality-bm25",
        "MiniLM cosine": "quality-cosine",
        "RRF(BM25, cosine)": "quality-rrf",
        "cairn recall, ideas off, ranked to 20": "quality-cairn-ideas-off",
        "cairn recall, defaults, ranked to 20": "quality-cairn-defaults",
    }
    anchor = anchors.get(name, "quality-cairn-shipped" if "as shipped" in name else None)
    return f'<a id="{anchor}"></a>{name}' if anchor else name


def render_runs(runs: Sequence[Run]) -> str:
    parts = ["### Overall", ""]
    rows = [report.summary_row(_anchored(r.name), r.groups["overall"]) for r in runs]
    parts += [report.table(report.summary_header("retriever"), rows), ""]
    parts += ["### Against the reference baselines (R@k, shared/data/README.md)", ""]
    compare = []
    for r in runs:
        if r.name in REFERENCE:
            measured = r.groups["overall"].recall
            compare.append(
                [r.name]
                + [
                    f"{m:.3f} ({ref:.3f})"
                    for m, ref in zip(measured, REFERENCE[r.name], strict=True)
                ]
            )
    header = ["retriever"] + [f"R@{k} measured (reference)" for k in (1, 5, 10, 20)]
    parts += [report.table(header, compare), ""]
    for r in runs:
        parts += [f"### {r.name}, per category ({r.seconds:.1f} s)", ""]
        parts += [report.per_category_table(r.groups), ""]
    return "\n".join(parts)
