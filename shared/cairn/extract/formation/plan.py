"""Formation, the one write path: candidate records and their nearest live records -> changes.

``plan_formation`` is pure (the judge is injected) and returns ``cairn.changes`` values for one
atomic ``RecordStore.apply``. For each candidate, in order:

1. Repeats within the batch (equal content digests) are one candidate: sources, tags and
   entities unioned, the highest confidence and latest sighting kept.
2. An exact or near-exact repeat of a neighbour folds in (``seen_count``, ``last_seen_at``)
   without asking anyone, if its evidence is independent (the user's own words; a repeat by the
   assistant or a tool echoes what it may have recalled and changes nothing): an equal content
   digest; or the same negation words and a cosine of at least ``fold_in_cosine`` (both have
   vectors in one space) or, without vectors, a word-set Jaccard of at least
   ``fold_in_jaccard``. A summary folds in only on an equal digest.
3. A summary candidate evolves the summary already in its namespace: a merge with its text.
4. Otherwise, if it has neighbours, the judge decides (``same`` folds in, ``merge``,
   ``supersede``, ``create``); the judge sees small integer aliases, never record ids.
   Without neighbours it is created.
5. Authority (``cairn.authority``): a candidate whose evidence may not change a record (a tool's
   or the assistant's words against what the user said, or an earlier user statement against a
   later one) is humble: it never folds into, merges into or supersedes that record. Its merge
   becomes a record of its own linked to the record (``relates_to``), and its supersede a record
   of its own that ``contradicts`` it (rendered as contested). A model reading the user's own
   turn speaks for the user, so a user's correction ("I eat meat now") supersedes an earlier
   statement. No merge lowers confidence (the higher of the two is kept), and a merge adds tags,
   entities, confidence or text only together with the candidate's sources.
6. One change per record: a second candidate aimed at a record another change already targets
   is folded into that change if it is a repeat, and otherwise created as a record of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from cairn.answers.extraction import Action
from cairn.authority import Authority, authority_of, may_change
from cairn.changes import Change, Create, FoldIn, NewRecord, RecordPatch, Revise, Supersede
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY, ExtractionPolicy
from cairn.extract.formation.judge import Judge, check_decisions, formation_input
from cairn.extract.formation.neighbours import Neighbour
from cairn.memories import StrategyKind
from cairn.models import (
    Edge,
    EdgeKind,
    RecordVersion,
    canonical_content,
    content_digest,
    union_sources,
)
from cairn.quarantine import Quarantine

_WORD = re.compile(r"[^\W_]+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n['’]t\b"
)


def plan_formation(
    candidates: Sequence[NewRecord],
    neighbours: Sequence[Sequence[Neighbour]],
    judge: Judge,
    policy: ExtractionPolicy = DEFAULT_EXTRACTION_POLICY,
    quarantine: Quarantine | None = None,
) -> list[Change]:
    """The changes that file ``candidates`` (``neighbours[i]``: candidate i's nearest live
    records): at most one change per candidate and per record; the judge is called at most once.

    Raises ``InvalidModelOutputError`` when the judge's decisions do not fit its document.
    """
    unique, near = _collapse(candidates, neighbours)
    decided: dict[int, _Plan] = {}
    cases: list[int] = []
    for index, candidate in enumerate(unique):
        repeat = next((n for n in near[index] if is_repeat(candidate, n, policy)), None)
        summary = _summary_head(candidate, near[index])
        if repeat is not None:
            decided[index] = _Plan("same", repeat.version)
        elif summary is not None:
            decided[index] = _Plan("merge", summary, candidate.content)
        elif near[index]:
            cases.append(index)
    if cases:
        document, by_alias = formation_input(unique, near, cases)
        decisions = judge(document)
        check_decisions(document, decisions)
        for decision in decisions:
            target = by_alias[decision.target] if decision.target is not None else None
            decided[cases[decision.candidate - 1]] = _Plan(
                decision.action, target, decision.content
            )
    return _changes(unique, decided, quarantine)


def is_repeat(candidate: NewRecord, neighbour: Neighbour, policy: ExtractionPolicy) -> bool:
    """Whether ``candidate`` says exactly or nearly exactly what ``neighbour`` says (rule 2)."""
    head = neighbour.version
    if content_digest(candidate.content) == head.content_digest:
        return True
    if candidate.strategy == StrategyKind.SUMMARY.value:
        return False  # a summary's small change is news: it evolves the summary (rule 3)
    if _negations(candidate.content) != _negations(head.content):
        return False
    if neighbour.cosine is not None:
        return neighbour.cosine >= policy.fold_in_cosine
    return _word_jaccard(candidate.content, head.content) >= policy.fold_in_jaccard


def _negations(text: str) -> list[str]:
    return sorted(_NEGATION.findall(canonical_content(text)))


def _word_jaccard(left: str, right: str) -> float:
    a = set(_WORD.findall(canonical_content(left)))
    b = set(_WORD.findall(canonical_content(right)))
    return len(a & b) / len(a | b) if a | b else 1.0


def _summary_head(candidate: NewRecord, near: Sequence[Neighbour]) -> RecordVersion | None:
    if candidate.strategy != StrategyKind.SUMMARY.value:
        return None
    summaries = [
        n.version
        for n in near
        if n.version.strategy == candidate.strategy and n.version.namespace == candidate.namespace
    ]
    return max(summaries, key=lambda v: v.last_seen_at, default=None)


def _collapse(
    candidates: Sequence[NewRecord], neighbours: Sequence[Sequence[Neighbour]]
) -> tuple[list[NewRecord], list[Sequence[Neighbour]]]:
    """Rule 1: one candidate per content digest, keeping the first's neighbours."""
    by_digest: dict[str, int] = {}
    unique: list[NewRecord] = []
    near: list[Sequence[Neighbour]] = []
    for candidate, found in zip(candidates, neighbours, strict=True):
        digest = content_digest(candidate.content)
        if digest not in by_digest:
            by_digest[digest] = len(unique)
            unique.append(candidate)
            near.append(found)
            continue
        first = unique[by_digest[digest]]
        unique[by_digest[digest]] = first.model_copy(
            update={
                "sources": union_sources(first.sources, candidate.sources),
                "tags": _union(first.tags, candidate.tags),
                "entities": _union(first.entities, candidate.entities),
                "confidence": max(first.confidence, candidate.confidence),
                "seen_at": _latest(first, candidate),
            }
        )
    return unique, near


def _latest(first: NewRecord, other: NewRecord) -> datetime | None:
    times = [t for t in (first.seen_at, other.seen_at) if t is not None]
    return max(times, default=None)


T = TypeVar("T")


def _union(left: tuple[T, ...], right: tuple[T, ...]) -> tuple[T, ...]:
    return tuple(dict.fromkeys((*left, *right)))


@dataclass(frozen=True, slots=True)
class _Plan:
    action: Action
    target: RecordVersion | None = None
    content: str | None = None


_CREATE = _Plan("create")


def _changes(
    unique: Sequence[NewRecord], decided: Mapping[int, _Plan], quarantine: Quarantine | None
) -> list[Change]:
    """One change per candidate, in order; rule 6 for a record targeted twice."""
    changes: list[Change] = []
    claimed: dict[str, int] = {}
    for index, candidate in enumerate(unique):
        plan = decided.get(index, _CREATE)
        if plan.target is not None and plan.target.record_id in claimed:
            position = claimed[plan.target.record_id]
            earlier = changes[position]
            if plan.action == "same" and isinstance(earlier, FoldIn | Revise):
                changes[position] = _with_sources(earlier, candidate)
                continue
            plan = _CREATE
        change = _change(candidate, plan, quarantine)
        if change is None:
            continue
        if not isinstance(change, Create) and plan.target is not None:
            claimed[plan.target.record_id] = len(changes)
        changes.append(change)
    return changes


def _change(candidate: NewRecord, plan: _Plan, quarantine: Quarantine | None) -> Change | None:
    head = plan.target
    if head is None or plan.action == "create":
        return Create(record=candidate)
    if plan.action == "same" and authority_of(candidate.sources, quarantine) is Authority.UNTRUSTED:
        # Only independent evidence confirms: the assistant (or a tool) repeating a record it
        # may have just recalled is an echo, not a sighting.
        return None
    if humble(candidate, head, quarantine):
        kind = EdgeKind.CONTRADICTS if plan.action == "supersede" else EdgeKind.RELATES_TO
        link = Edge(kind=kind, target=head.record_id)
        return Create(
            record=candidate.model_copy(update={"edges": _union(candidate.edges, (link,))})
        )
    if plan.action == "same":
        return FoldIn(
            record_id=head.record_id, add_sources=candidate.sources, seen_at=candidate.seen_at
        )
    if plan.action == "merge":
        return merge(head, candidate, plan.content)
    return Supersede(record_id=head.record_id, replacement=candidate)


def humble(candidate: NewRecord, head: RecordVersion, quarantine: Quarantine | None = None) -> bool:
    """Whether ``candidate``'s evidence may not change ``head`` (rule 5, ``may_change``; a
    source on the memory's quarantine list counts as untrusted)."""
    return not may_change(candidate.sources, candidate.seen_at, head, quarantine)


def merge(head: RecordVersion, candidate: NewRecord, content: str | None) -> Revise:
    """Evolve ``head`` with ``candidate`` (rule 5, whose evidence may change it): ``content``
    replaces the text; tags, entities and edges are unioned and the higher confidence is kept,
    always with the candidate's sources added."""
    text = content
    if text is not None and content_digest(text) == head.content_digest:
        text = None
    tags = _union(head.tags, candidate.tags)
    entities = _union(head.entities, candidate.entities)
    edges = _union(head.edges, candidate.edges)
    confidence = max(head.confidence, candidate.confidence)
    patch = RecordPatch(
        content=text,
        confidence=confidence if confidence != head.confidence else None,
        tags=tags if tags != head.tags else None,
        entities=entities if entities != head.entities else None,
        edges=edges if edges != head.edges else None,
    )
    return Revise(record_id=head.record_id, patch=patch, add_sources=candidate.sources)


def _with_sources(change: FoldIn | Revise, candidate: NewRecord) -> FoldIn | Revise:
    sources = union_sources(change.add_sources, candidate.sources)
    if isinstance(change, Revise):
        return change.model_copy(update={"add_sources": sources})
    seen = [t for t in (change.seen_at, candidate.seen_at) if t is not None]
    return change.model_copy(update={"add_sources": sources, "seen_at": max(seen, default=None)})


def snapshot_of(changes: Sequence[Change], heads: Mapping[str, RecordVersion]) -> dict[str, int]:
    """The head version each change's target had when it was planned: what apply checks."""
    return {
        change.record_id: heads[change.record_id].version
        for change in changes
        if not isinstance(change, Create) and change.record_id in heads
    }
