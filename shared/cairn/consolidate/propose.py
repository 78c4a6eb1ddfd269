"""Proposing: which live records a pass shows, and the one bounded model call that proposes.

``select_records`` chooses at most ``max_records`` of the scope's live heads: those sharing the
most keywords with the evidence first (BM25, the recall engine's scorer), then the most
recently confirmed. Session summaries are left out: they are rewritten by extraction, not
tidied. ``propose`` asks the model once (once more if the answer is invalid, with the reason)
and returns the planned store changes, or the reason the answer was refused twice; model
timeouts and throttling propagate as the retryable errors they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cairn.answers.consolidation import ConsolidationAnswer
from cairn.consolidate.consolidation_policy import ConsolidationPolicy
from cairn.consolidate.evidence import EvidencePayload
from cairn.consolidate.prompts import ConsolidationInput, consolidation_request
from cairn.consolidate.validate import PassView, Planned, plan_answer
from cairn.llm.structured import ask_structured, parse_json_model
from cairn.memories import StrategyKind
from cairn.model_request import ModelUsage
from cairn.models import RecordVersion, Scope
from cairn.ports import MAX_PAGE_SIZE, ModelProvider, RecordStore
from cairn.recall.keywords import bm25_scores, tokenize
from cairn.scope_guard import in_scope

# BM25's usual constants (Robertson & Zaragoza); only the order they give matters here.
_K1, _B = 1.2, 0.75


def read_live(
    records: RecordStore, scope: Scope, policy: ConsolidationPolicy
) -> list[RecordVersion]:
    """Up to ``policy.max_scanned_records`` live heads of the scope, summaries left out; a row
    of another scope is dropped and logged (``cairn.scope_guard``) before the model sees it."""
    found: list[RecordVersion] = []
    cursor: str | None = None
    while len(found) < policy.max_scanned_records:
        page = records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        mine = in_scope(page.items, scope, where="consolidation")
        found.extend(v for v in mine if v.strategy != StrategyKind.SUMMARY.value)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found[: policy.max_scanned_records]


def _evidence_text(evidence: Sequence[EvidencePayload]) -> str:
    parts = [m.text for payload in evidence for m in payload.messages]
    parts += [payload.final_answer for payload in evidence if payload.final_answer]
    return "\n".join(parts)


def select_records(
    live: Sequence[RecordVersion], evidence: Sequence[EvidencePayload], limit: int
) -> list[RecordVersion]:
    """At most ``limit`` of ``live``: related to the evidence first, then the most recently
    confirmed; returned in record id order (the snapshot's order)."""
    if len(live) <= limit:
        return sorted(live, key=lambda v: v.record_id)
    query = tokenize(_evidence_text(evidence))
    scores = bm25_scores(query, [tokenize(v.content) for v in live], k1=_K1, b=_B)
    ranked = sorted(
        zip(scores, live, strict=True),
        key=lambda pair: (pair[0], pair[1].last_seen_at, pair[1].record_id),
        reverse=True,
    )
    return sorted((v for _, v in ranked[:limit]), key=lambda v: v.record_id)


@dataclass(frozen=True, slots=True)
class Proposal:
    """The planned changes, or ``None`` with the reason the answer was refused twice."""

    planned: Planned | None
    reason: str | None
    usage: ModelUsage


def propose(
    model: ModelProvider,
    view: PassView,
    document: ConsolidationInput,
    policy: ConsolidationPolicy,
    *,
    timeout_seconds: float,
) -> Proposal:
    """Ask for the changes ``document`` calls for and plan them against ``view``."""

    def read(text: str) -> Planned:
        return plan_answer(view, parse_json_model(text, ConsolidationAnswer), policy)

    request = consolidation_request(document, policy=policy, timeout_seconds=timeout_seconds)
    answered = ask_structured(model, request, read)
    return Proposal(planned=answered.value, reason=answered.reason, usage=answered.usage)
