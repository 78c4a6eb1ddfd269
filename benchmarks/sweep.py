"""Measuring cairn's recall engine on LoCoMo: as shipped, ranked to depth 20, and swept.

Each question is answered once by ``recall`` as shipped; its candidate pool is then gathered
once and ranked under every policy (``benchmarks.policies``), every fusion variant
(``benchmarks.fusions``) and, for the defaults, clamped to every block budget of
``BUDGET_TOKENS``. Knobs of the candidate step (BM25 k1 and b, re-embedding) are not swept: the
pool is gathered once, with the defaults.

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

from benchmarks.engine import (
    Index,
    build_index,
    gather_pool,
    recall_as_shipped,
    recall_wide,
    select,
)
from benchmarks.fusions import VARIANTS, select_with
from benchmarks.locomo import Question
from benchmarks.policies import ideas_off, with_knobs
from benchmarks.progress import bar
from benchmarks.retrieval import DEPTH, Prepared
from benchmarks.scoring import Outcome, judge
from cairn.ports import Embedder
from cairn.recall import DEFAULT_POLICY, RecallPolicy
from cairn.recall.budget import clamp
from cairn.recall.candidates import CandidatePool
from cairn.recall.dedup import deduplicate
from cairn.recall.ordering import order
from cairn.recall.query import DEFAULT_TOP_K, MAX_TOP_K

FOREIGN_PER_CONVERSATION = 30
BUDGET_TOKENS = (250, 500, 1000, 2000, 4000)


@dataclass
class PolicyResult:
    outcomes: list[Outcome] = field(default_factory=list)
    keyword_only: int = 0
    deduplicated: int = 0
    contextual: int = 0
    foreign_shown: list[int] = field(default_factory=list)


@dataclass
class BudgetResult:
    """What a block of one token budget held: evidence found, entries and bytes per question."""

    outcomes: list[Outcome] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)
    block_bytes: list[int] = field(default_factory=list)


@dataclass
class EngineResult:
    """Everything measured on cairn's engine over the conversations given."""

    shipped: list[Outcome] = field(default_factory=list)
    shipped_entries: list[int] = field(default_factory=list)
    shipped_bytes: list[int] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    policies: dict[str, PolicyResult] = field(default_factory=dict)
    fusions: dict[str, PolicyResult] = field(default_factory=dict)
    budgets: dict[int, BudgetResult] = field(default_factory=dict)
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


def budget_policy(tokens: int) -> RecallPolicy:
    """The defaults with the block bounded by ``tokens`` (the engine's 3-bytes-a-token estimate)."""
    return with_knobs(
        DEFAULT_POLICY,
        max_block_bytes=1_000_000,
        context_share=1.0,
        context_window_tokens=tokens,
    )


def _measure_budgets(
    result: EngineResult, pool: CandidatePool, question: Question, index: Index
) -> None:
    now = index.clock.now()
    ranked = order(pool, question.text, DEFAULT_POLICY, now).ranked
    unique = deduplicate(ranked, DEFAULT_POLICY, limit=MAX_TOP_K).kept
    for tokens in BUDGET_TOKENS:
        clamped = clamp(unique, budget_policy(tokens), MAX_TOP_K)
        ids = [index.dia_ids[item.candidate.version.record_id] for item in clamped.selected]
        entry = result.budgets.setdefault(tokens, BudgetResult())
        entry.outcomes.append(judge(question, ids, ks=(MAX_TOP_K,)))
        entry.entries.append(len(ids))
        entry.block_bytes.append(clamped.block_bytes)


def _measure_question(
    result: EngineResult,
    index: Index,
    question: Question,
    embedder: Embedder,
    policies: dict[str, RecallPolicy],
    wide_check: bool,
) -> None:
    now = index.clock.now()
    began = time.perf_counter()
    shipped = recall_as_shipped(index, question.text, embedder)
    result.latency_ms.append((time.perf_counter() - began) * 1000)
    shown = [e.version.record_id for e in shipped.entries]
    result.shipped.append(judge(question, [index.dia_ids[r] for r in shown]))
    result.shipped_entries.append(len(shown))
    result.shipped_bytes.append(len(shipped.block.encode("utf-8")))
    pool = gather_pool(index, question.text, embedder, DEFAULT_POLICY, DEPTH)
    for label, policy in policies.items():
        chosen = select(pool, question.text, policy, now, DEPTH)
        entry = result.policies[label]
        entry.outcomes.append(judge(question, [index.dia_ids[r] for r in chosen.record_ids]))
        entry.keyword_only += chosen.keyword_only
        entry.deduplicated += chosen.deduplicated
        entry.contextual += chosen.contextual
        if label == "defaults":
            result.prefix_violations += shown != chosen.record_ids[: len(shown)]
            if wide_check:
                wide = recall_wide(index, question.text, embedder, policy, DEPTH)
                result.wide_checked += 1
                wide_ids = [e.version.record_id for e in wide.entries]
                result.wide_mismatches += wide_ids != chosen.record_ids
    off = ideas_off()
    for label, fusion in VARIANTS.items():
        ids = select_with(fusion, pool, question.text, off, now, DEPTH)
        result.fusions[label].outcomes.append(judge(question, [index.dia_ids[r] for r in ids]))
    _measure_budgets(result, pool, question, index)


def measure(
    prepared: Sequence[Prepared],
    embedder: Embedder,
    policies: dict[str, RecallPolicy],
    foreign: dict[str, list[str]],
    *,
    wide_check_conversations: int = 1,
    quiet: bool = False,
) -> EngineResult:
    """Answer every question as shipped, then rank its pool under every policy and fusion
    variant; ask each conversation's memory its ``foreign`` questions (by sample id) too.
    A bar of questions answered is on stderr while it runs (a terminal only; not ``quiet``)."""
    started = time.perf_counter()
    result = EngineResult(
        policies={label: PolicyResult() for label in policies},
        fusions={label: PolicyResult() for label in VARIANTS},
    )
    total = sum(len(item.conversation.questions) for item in prepared)
    with bar(total, "recall under every policy", "question", quiet=quiet) as shown:
        for position, item in enumerate(prepared):
            asked = foreign.get(item.conversation.sample_id, [])
            wide = position < wide_check_conversations
            _measure_conversation(result, item, embedder, policies, asked, wide=wide)
            shown.update(len(item.conversation.questions))
    result.seconds = time.perf_counter() - started
    return result


def _measure_conversation(
    result: EngineResult,
    item: Prepared,
    embedder: Embedder,
    policies: dict[str, RecallPolicy],
    foreign: Sequence[str],
    *,
    wide: bool,
) -> None:
    """Index one conversation, answer its questions, then ask it the ``foreign`` ones."""
    index = build_index(item, embedder)
    now = index.clock.now()
    for question in item.conversation.questions:
        _measure_question(result, index, question, embedder, policies, wide)
    for text in foreign[:FOREIGN_PER_CONVERSATION]:
        pool = gather_pool(index, text, embedder, DEFAULT_POLICY, DEFAULT_TOP_K)
        for label, policy in policies.items():
            shown = select(pool, text, policy, now, DEFAULT_TOP_K).record_ids
            result.policies[label].foreign_shown.append(len(shown))
