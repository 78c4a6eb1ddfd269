"""The recall policies the quality benchmark measures: the ideas one by one, and the sweep.

The ideas (issue 8): (a) session-date awareness, ``temporal_weight``; (b) speaker awareness,
``entity_weight``; (c) neighbouring-turn context, ``context_weight``; (d) better fusion, measured
as the engine's own fusion knobs plus the benchmark-only variants of ``benchmarks.fusions``;
(e) a cross-encoder, which no offline PyPI wheel ships (see ``CROSS_ENCODER_NOTE``). Each idea
is measured alone on top of "ideas off" (today's defaults with the three weights at 0), then all
together.

The sweep varies one knob at a time around the defaults, every other knob at its default.
"""

from __future__ import annotations

from typing import Any

from cairn.recall import DEFAULT_POLICY, RecallPolicy

IDEA_KNOBS = ("temporal_weight", "entity_weight", "context_weight")
# The value each idea is measured at when the defaults leave it off.
IDEA_ON: dict[str, float] = {"temporal_weight": 0.2, "entity_weight": 0.2, "context_weight": 0.9}
IDEA_LABELS = {
    "temporal_weight": "+a session dates",
    "entity_weight": "+b speakers",
    "context_weight": "+c neighbouring turns",
}
CROSS_ENCODER_NOTE = (
    "(e) cross-encoder: not measured. No PyPI wheel in the package index ships cross-encoder "
    "weights: `flashrank` (0.2.10) is a 14 KB wheel that downloads its ms-marco models from a "
    "model hub on first use; `small-hybrid-reranker` (0.2.1) ships a LightGBM ranker but loads "
    "its static embedder (`cnmoro/static-nomic-384-pten-v2`) from the hub; the ONNX "
    "ms-marco-MiniLM cross-encoders exist only as hub downloads. Nothing may download weights "
    "at run time here, so there is no offline cross-encoder to try."
)

# One knob at a time: on LoCoMo the floor and the dedup threshold do not interact (a full grid
# of both, measured once, moved no cell by more than its two 1-D neighbours did).
ONE_AT_A_TIME: dict[str, tuple[Any, ...]] = {
    "relevance_floor": (0.0, 0.2, 0.25, 0.35, 0.4, 0.5),
    "dedup_cosine": (0.85, 0.95),
    "keyword_weight": (0.0, 0.2, 0.4, 0.5, 1.0),
    "fusion": ("rrf",),
    "recency_weight": (0.0, 0.2),
    "keyword_floor": (0.0, 0.3),
    "context_weight": (0.0, 0.7, 0.8, 0.95),
    "context_span": (1, 3),
    "context_hits": (1, 5, 10),
    "list_context_hits": (2, 3),
    "entity_weight": (0.0, 0.1, 0.2, 0.3, 0.5),
    "temporal_weight": (0.0, 0.1, 0.4),
    "temporal_lag_days": (0.0, 30.0),
}
# A high cosine floor sends more recalls to the keyword fallback, which keyword_floor bounds.
FALLBACK_FLOORS = (0.4, 0.5)
FALLBACK_KEYWORD_FLOORS = (0.5,)


def with_knobs(base: RecallPolicy, **update: Any) -> RecallPolicy:
    """``base`` with ``update`` applied, validated again."""
    return RecallPolicy(**{**base.model_dump(), **update})


def ideas_off(base: RecallPolicy = DEFAULT_POLICY) -> RecallPolicy:
    """``base`` with every idea's weight at 0: the engine as it was before the ideas."""
    return with_knobs(base, **dict.fromkeys(IDEA_KNOBS, 0.0))


def idea_value(knob: str, base: RecallPolicy = DEFAULT_POLICY) -> float:
    """The value an idea is measured at: its default if the defaults turn it on."""
    value = float(getattr(base, knob))
    return value if value > 0 else IDEA_ON[knob]


def ablation_policies(base: RecallPolicy = DEFAULT_POLICY) -> dict[str, RecallPolicy]:
    """ "ideas off", each idea alone on top of it, then all of them, by label."""
    off = ideas_off(base)
    policies = {"ideas off": off}
    for knob in IDEA_KNOBS:
        value = idea_value(knob, base)
        policies[f"{IDEA_LABELS[knob]} ({knob} {value:g})"] = with_knobs(off, **{knob: value})
    every = {knob: idea_value(knob, base) for knob in IDEA_KNOBS}
    policies["all: a + b + c"] = with_knobs(off, **every)
    return policies


FUSION_KNOBS: tuple[dict[str, Any], ...] = (
    {"keyword_weight": 0.2},
    {"keyword_weight": 0.4},
    {"keyword_weight": 0.5},
    {"fusion": "rrf"},
)


def fusion_knob_policies(base: RecallPolicy = DEFAULT_POLICY) -> dict[str, RecallPolicy]:
    """The engine's own fusion alternatives on top of "ideas off", by label."""
    off = ideas_off(base)
    return {
        "engine " + ", ".join(f"{k} {v}" for k, v in update.items()): with_knobs(off, **update)
        for update in FUSION_KNOBS
    }


def sweep_policies(base: RecallPolicy = DEFAULT_POLICY) -> dict[str, RecallPolicy]:
    """Every policy of the sweep by a label naming what differs from ``base``; no repeats."""
    policies: dict[str, RecallPolicy] = {"defaults": base}
    seen = {base.model_dump_json()}
    candidates: list[tuple[str, dict[str, Any]]] = [
        (f"{knob} {value}", {knob: value})
        for knob, values in ONE_AT_A_TIME.items()
        for value in values
    ]
    candidates += [
        (
            f"relevance_floor {floor}, keyword_floor {kw}",
            {"relevance_floor": floor, "keyword_floor": kw},
        )
        for floor in FALLBACK_FLOORS
        for kw in FALLBACK_KEYWORD_FLOORS
    ]
    for label, update in candidates:
        policy = with_knobs(base, **update)
        key = policy.model_dump_json()
        if key not in seen:
            seen.add(key)
            policies[label] = policy
    return policies


FACT_SWEEP: dict[str, tuple[Any, ...]] = {
    "relevance_floor": (0.0, 0.05, 0.15, 0.2, 0.3),
    "weak_floor": (0.0, 0.1),
    "subject_share": (0.0, 0.2, 0.3),
    "confident_cosine": (0.4, 0.6),
    "confident_margin": (0.12, 0.2),
    "confident_keyword": (0.3, 1.01),
    "keyword_scale": ("best",),
    "keyword_weight": (0.0, 0.3, 0.7),
    "recency_weight": (0.0,),
}


def fact_policies(base: RecallPolicy = DEFAULT_POLICY) -> dict[str, RecallPolicy]:
    """The policies the fact set is ranked under: the defaults first, then one knob at a time
    (a weak bar above the floor is clipped to it)."""
    policies: dict[str, RecallPolicy] = {"defaults": base}
    for knob, values in FACT_SWEEP.items():
        for value in values:
            update = {knob: value}
            if knob == "weak_floor":
                update[knob] = min(value, base.relevance_floor)
            if knob == "relevance_floor":
                update["weak_floor"] = min(base.weak_floor, value)
            policies[f"{knob} {value}"] = with_knobs(base, **update)
    return policies
