"""The quality page's sections on the ideas: the ablation, the fusion variants, the budget curve."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchmarks import report
from benchmarks.fusions import VARIANTS
from benchmarks.locomo import CATEGORY_NAMES
from benchmarks.policies import CROSS_ENCODER_NOTE, ablation_policies, fusion_knob_policies
from benchmarks.scoring import Outcome, by_category, summarise
from benchmarks.sweep import BUDGET_TOKENS, EngineResult, PolicyResult, budget_policy
from cairn.recall import DEFAULT_POLICY
from cairn.recall.query import DEFAULT_TOP_K, MAX_TOP_K

REFERENCE_RRF_R10 = 0.629


def _anchor(name: str, label: str) -> str:
    return f'<a id="{name}"></a>{label}'


def _idea_row(label: str, outcomes: Sequence[Outcome], foreign: Sequence[int]) -> list[object]:
    groups = by_category(outcomes)
    overall = groups["overall"]
    row: list[object] = [label, *overall.recall, overall.hit[1], overall.hit[2]]
    row += [groups[name].recall[2] for name in CATEGORY_NAMES.values() if name in groups]
    if foreign:
        row.append(f"{sum(foreign) / len(foreign):.2f}")
    else:
        row.append("-")
    return row


def _best_fusion(engine: EngineResult) -> tuple[str, PolicyResult]:
    """The fusion alternative with the best R@10 on top of "ideas off": knob or variant."""
    candidates = {label: engine.policies[label] for label in fusion_knob_policies()}
    candidates.update(engine.fusions)
    return max(candidates.items(), key=lambda kv: (summarise(kv[1].outcomes).recall[2], kv[0]))


def render_ablation(engine: EngineResult) -> str:
    header = ["recall policy", "R@1", "R@5", "R@10", "R@20", "hit@5", "hit@10"]
    header += [f"R@10 {name}" for name in CATEGORY_NAMES.values()]
    header += [f"foreign shown/{DEFAULT_TOP_K}"]
    rows = []
    for label in ablation_policies():
        result = engine.policies[label]
        name = "ideas-off" if label == "ideas off" else "ideas-all" if "all" in label else ""
        shown = _anchor(f"quality-{name}", label) if name else label
        rows.append(_idea_row(shown, result.outcomes, result.foreign_shown))
    fusion_label, fusion = _best_fusion(engine)
    rows.insert(4, _idea_row(f"+d best fusion alternative: {fusion_label}", fusion.outcomes, []))
    defaults = engine.policies["defaults"]
    rows.append(
        _idea_row(
            _anchor("quality-defaults", "defaults (as shipped, ranked to 20)"),
            defaults.outcomes,
            defaults.foreign_shown,
        )
    )
    r10 = summarise(defaults.outcomes).recall[2]
    return "\n".join(
        [
            "### Recall-quality ideas, one at a time (ranked to 20)",
            "",
            'Each idea alone on top of "ideas off" (the defaults with `temporal_weight`, '
            "`entity_weight` and `context_weight` at 0), then together. No model call at "
            "query time; the reference hybrid (RRF) reaches R@10 "
            f"{REFERENCE_RRF_R10:.3f} on this split, the defaults {r10:.3f}.",
            "",
            report.table(header, rows),
            "",
            "(a) session dates: a query naming a day, month, season or year (or a relative "
            "time) lifts records dated in it (`cairn.recall.temporal`); (b) speakers: a query "
            "naming one of a record's entities (here: the turn's speaker) lifts it; (c) "
            "neighbouring turns: a hit lends its neighbours in the same session "
            "`context_weight ** distance` of its relevance (`cairn.recall.expansion`); (d) the "
            "best of the engine's fusion knobs and the benchmark's fusion variants below, on top "
            'of "ideas off". Foreign: entries shown (of 8) to another conversation\'s questions; '
            "lower is better.",
            "",
            CROSS_ENCODER_NOTE,
            "",
        ]
    )


def render_fusions(engine: EngineResult) -> str:
    header = ['fusion (on top of "ideas off")', "R@1", "R@5", "R@10", "R@20", "hit@5", "hit@10"]
    rows: list[list[object]] = []
    off = engine.policies["ideas off"]
    rows.append(_summary_cells('engine blend, keyword_weight 0.3 ("ideas off")', off.outcomes))
    for label in fusion_knob_policies():
        rows.append(_summary_cells(label, engine.policies[label].outcomes))
    for label in VARIANTS:
        rows.append(_summary_cells(label, engine.fusions[label].outcomes))
    return "\n".join(
        [
            "### Idea (d): fusion variants",
            "",
            "The engine's own fusion knobs first, then variants that live only in "
            "`benchmarks/fusions.py` and replace the blend over the same survivors of the floor "
            "(z-score: both scores standardised, blended, squashed; above the floor: cosine "
            "rescaled to [0, 1] from the floor up; blend + RRF: a 20% share of reciprocal-rank "
            "fusion; sharpness: the keyword weight grows when the best keyword match stands out "
            "from the tenth).",
            "",
            report.table(header, rows),
            "",
        ]
    )


def _summary_cells(label: str, outcomes: Sequence[Outcome]) -> list[object]:
    s = summarise(outcomes)
    return [label, *s.recall, s.hit[1], s.hit[2]]


def render_budgets(engine: EngineResult) -> str:
    header = ["block budget (tokens)", "bytes limit", "entries/block", "block bytes (median)"]
    header += ["R (evidence in block)", "hit"] + [f"R {name}" for name in CATEGORY_NAMES.values()]
    rows: list[list[object]] = []
    for tokens in BUDGET_TOKENS:
        result = engine.budgets.get(tokens)
        if result is None or not result.outcomes:
            continue
        groups = by_category(result.outcomes, ks=(MAX_TOP_K,))
        row: list[object] = [
            _anchor(f"budget-{tokens}", str(tokens)),
            budget_policy(tokens).block_byte_limit,
            f"{sum(result.entries) / len(result.entries):.1f}",
            f"{statistics.median(result.block_bytes):.0f}",
            groups["overall"].recall[0],
            groups["overall"].hit[0],
        ]
        row += [groups[name].recall[0] for name in CATEGORY_NAMES.values() if name in groups]
        rows.append(row)
    return "\n".join(
        [
            "### Recall against block budget",
            "",
            f"The defaults' ranking (dedup to {MAX_TOP_K}) clamped by a token budget alone "
            f"(`context_share` 1.0 of `context_window_tokens` = the budget; the engine counts "
            f"{DEFAULT_POLICY.bytes_per_token} bytes a token, frame included; no `top_k` cap): "
            "R is the share of a question's evidence the block holds.",
            "",
            report.table(header, rows),
            "",
        ]
    )
