"""Measuring cairn's recall engine on LoCoMo: as shipped, ranked to depth 20, and swept.

The sweep varies the knobs of ``RecallPolicy`` that decide what is shown, one at a time (the
relevance floor, the paraphrase-dedup threshold, keyword weight, fusion, recency weight, keyword
floor), every other knob at its default, plus high floors crossed with the keyword floor. Knobs
of the candidate step (BM25 k1 and b, re-embedding) are not swept: the pool is gathered once,
with the defaults.

LoCoMo only measures what a knob costs (every question has evidence, so dropping anything can
only lose recall). What a floor is for, showing nothing when nothing is relevant, is measured
with foreign questions: questions from another conversation asked of this one's memory, whose
people and events it never saw. The fewer entries they get, the better.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.engine import (
    build_index,
    gather_pool,
    recall_as_shipped,
    recall_wide,
    select,
)
from benchmarks.retrieval import DEPTH, Prepared
from benchmarks.scoring import Outcome, judge
from cairn.ports import Embedder
from cairn.recall import DEFAULT_POLICY, RecallPolicy
from cairn.recall.query import DEFAULT_TOP_K

# One knob at a time: on LoCoMo the floor and the dedup threshold do not interact (a full grid
# of both, measured once, moved no cell by more than its two 1-D neighbours did).
ONE_AT_A_TIME: dict[str, tuple[Any, ...]] = {
    "relevance_floor": (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5),
    "dedup_cosine": (0.85, 0.95, 1.0),
    "keyword_weight": (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0),
    "fusion": ("rrf",),
    "recency_weight": (0.0, 0.2, 0.3),
    "keyword_floor": (0.0, 0.3),
}
# A high cosine floor sends more recalls to the keyword fallback, which keyword_floor bounds.
FALLBACK_FLOORS = (0.3, 0.4, 0.5)
FALLBACK_KEYWORD_FLOORS = (0.3, 0.5)
FOREIGN_PER_CONVERSATION = 30


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
        policy = RecallPolicy(**{**base.model_dump(), **update})
        key = policy.model_dump_json()
        if key not in seen:
            seen.add(key)
            policies[label] = policy
    return policies


@dataclass
class PolicyResult:
    outcomes: list[Outcome] = field(default_factory=list)
    keyword_only: int = 0
    deduplicated: int = 0
    foreign_shown: list[int] = field(default_factory=list)


@dataclass
class EngineResult:
    """Everything measured on cairn's engine over the conversations given."""

    shipped: list[Outcome] = field(default_factory=list)
    shipped_entries: list[int] = field(default_factory=list)
    shipped_bytes: list[int] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    policies: dict[str, PolicyResult] = field(default_factory=dict)
    prefix_violations: int = 0
    wide_checked: int = 0
    wide_mismatches: int = 0
    seconds: float = 0.0

    def latency(self) -> str:
        ordered = sorted(self.latency_ms)
        if not ordered:
            return "no recalls"
        p95 = ordered[round(0.95 * (len(ordered) - 1))]
        return f"median {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms"


def measure(
    prepared: Sequence[Prepared],
    embedder: Embedder,
    policies: dict[str, RecallPolicy],
    foreign: dict[str, list[str]],
    *,
    wide_check_conversations: int = 1,
) -> EngineResult:
    """Answer every question as shipped, then rank its pool under every policy; ask each
    conversation's memory its ``foreign`` questions (by sample id) under every policy too."""
    started = time.perf_counter()
    result = EngineResult(policies={label: PolicyResult() for label in policies})
    for position, item in enumerate(prepared):
        index = build_index(item, embedder)
        now = index.clock.now()
        for question in item.conversation.questions:
            began = time.perf_counter()
            shipped = recall_as_shipped(index, question.text, embedder)
            result.latency_ms.append((time.perf_counter() - began) * 1000)
            shown = [e.version.record_id for e in shipped.entries]
            result.shipped.append(judge(question, [index.dia_ids[r] for r in shown]))
            result.shipped_entries.append(len(shown))
            result.shipped_bytes.append(len(shipped.block.encode("utf-8")))
            pool = gather_pool(index, question.text, embedder, DEFAULT_POLICY, DEPTH)
            for label, policy in policies.items():
                chosen = select(pool, policy, now, DEPTH)
                entry = result.policies[label]
                entry.outcomes.append(
                    judge(question, [index.dia_ids[r] for r in chosen.record_ids])
                )
                entry.keyword_only += chosen.keyword_only
                entry.deduplicated += chosen.deduplicated
                if label == "defaults":
                    result.prefix_violations += shown != chosen.record_ids[: len(shown)]
                    if position < wide_check_conversations:
                        wide = recall_wide(index, question.text, embedder, policy, DEPTH)
                        result.wide_checked += 1
                        wide_ids = [e.version.record_id for e in wide.entries]
                        result.wide_mismatches += wide_ids != chosen.record_ids
        for text in foreign.get(item.conversation.sample_id, [])[:FOREIGN_PER_CONVERSATION]:
            pool = gather_pool(index, text, embedder, DEFAULT_POLICY, DEFAULT_TOP_K)
            for label, policy in policies.items():
                shown = select(pool, policy, now, DEFAULT_TOP_K).record_ids
                result.policies[label].foreign_shown.append(len(shown))
    result.seconds = time.perf_counter() - started
    return result
