"""Checking a consolidation answer against its request, and planning the store changes it means.

``plan_answer`` is pure: the answer's aliases are mapped back to the records and evidence
rollouts of this pass (``PassView``; an alias the request did not assign, or a record named by
two changes, makes the answer invalid) and each proposed change becomes ``cairn.changes``
values for one atomic apply:

- ``add``: a ``Create`` in the memory's fact or preference namespace, citing the evidence
  (``Source(kind=model, rollout_id=..., run_id=...)``), its confidence capped as inferred; a
  repeat of a shown record adds nothing (the run may have recalled it: no confirmation). With
  ``supersedes``, a ``Supersede``: the old record kept, marked and linked to the new one.
- ``merge``: the records fold into one keeper (the user-stated one first, then the most
  recently confirmed): ``SupersedeBy`` for each other record, and a ``Revise`` of the keeper
  with the merged line, tags unioned and the higher confidence kept, citing the evidence and
  the sources of every merged record.
- ``retract``: a ``Retract`` with the reason and the evidence rollout ids.

Authority (``cairn.authority``): a pass's evidence (the model reading a run) never retires,
edits or merges a user's record: its supersede becomes a record that ``contradicts`` it
(``contested``); a retract or merge of it is left out (``refused``).
- ``contradiction``: ``cairn.consolidate.contradictions.resolve_contradiction``.

Every failure raises ``InvalidModelOutputError`` with a reason that quotes no content, so the
structured-output retry can show it to the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cairn.answers.consolidation import (
    AddChange,
    ConsolidationAnswer,
    ContradictionChange,
    MergeChange,
    ProposedChange,
    RetractChange,
)
from cairn.authority import may_change
from cairn.changes import (
    Change,
    Create,
    NewRecord,
    RecordPatch,
    Retract,
    Revise,
    Supersede,
    SupersedeBy,
)
from cairn.consolidate.consolidation_policy import ConsolidationPolicy
from cairn.consolidate.contradictions import resolve_contradiction, unmark_partners
from cairn.consolidate.evidence import EvidencePayload
from cairn.consolidate.targets import NamespaceTargets
from cairn.errors import InvalidModelOutputError
from cairn.models import (
    Edge,
    EdgeKind,
    Frozen,
    RecordVersion,
    Source,
    SourceKind,
    Trust,
    content_digest,
    union_sources,
)


class ConsolidationCounts(Frozen):
    """What a pass changed, for metrics (never content)."""

    added: int = 0
    folded_in: int = 0
    merged: int = 0
    retracted: int = 0
    superseded: int = 0
    contested: int = 0
    unmarked: int = 0
    # Changes left out because their evidence may not change the record (cairn.authority).
    refused: int = 0


@dataclass(frozen=True)
class PassView:
    """What the request showed under each alias, and where additions go."""

    records: Mapping[int, RecordVersion]
    evidence: Mapping[int, EvidencePayload]
    targets: NamespaceTargets


@dataclass
class Planned:
    """The store changes an answer means, and their counts."""

    changes: list[Change] = field(default_factory=list)
    counts: ConsolidationCounts = field(default_factory=ConsolidationCounts)

    def add(self, changes: Sequence[Change], **counts: int) -> None:
        self.changes.extend(changes)
        update = {name: getattr(self.counts, name) + value for name, value in counts.items()}
        self.counts = self.counts.model_copy(update=update)


def _named_records(change: ProposedChange) -> tuple[int, ...]:
    if isinstance(change, MergeChange | ContradictionChange):
        return tuple(change.records)
    if isinstance(change, RetractChange):
        return (change.record,)
    return (change.supersedes,) if change.supersedes is not None else ()


def check_answer(view: PassView, answer: ConsolidationAnswer) -> None:
    """Raise ``InvalidModelOutputError`` unless every alias was shown and each record is named
    by at most one change."""
    named: set[int] = set()
    for position, change in enumerate(answer.changes, start=1):
        for alias in change.evidence:
            if alias not in view.evidence:
                raise InvalidModelOutputError(
                    f"change {position} cites evidence {alias}, which was not shown (the "
                    f"evidence aliases are 1-{len(view.evidence)})"
                )
        for alias in _named_records(change):
            if alias not in view.records:
                raise InvalidModelOutputError(
                    f"change {position} names record {alias}, which was not shown (the record "
                    f"aliases are 1-{len(view.records)})"
                )
            if alias in named:
                raise InvalidModelOutputError(
                    f"record {alias} is named by more than one change; name each record once"
                )
            named.add(alias)


def plan_answer(
    view: PassView, answer: ConsolidationAnswer, policy: ConsolidationPolicy
) -> Planned:
    """The store changes ``answer`` means; ``InvalidModelOutputError`` if it does not fit its
    request or needs more than ``policy.max_changes`` store changes."""
    check_answer(view, answer)
    planned = Planned()
    claimed = {view.records[a].record_id for c in answer.changes for a in _named_records(c)}
    for change in answer.changes:
        if isinstance(change, AddChange):
            _add(view, change, policy, claimed, planned)
        elif isinstance(change, MergeChange):
            _merge(view, change, planned)
        elif isinstance(change, RetractChange):
            if _may(view, change.evidence, view.records[change.record]):
                planned.add([_retract(view, change)], retracted=1)
            else:
                planned.add([], refused=1)  # the model never retracts what the user stated
        else:
            _contradiction(view, change, planned)
    retired = [c.record_id for c in planned.changes if isinstance(c, Retract | SupersedeBy)]
    if len(planned.changes) > policy.max_changes:
        raise InvalidModelOutputError(
            f"the changes need {len(planned.changes)} store changes, over the "
            f"{policy.max_changes} one commit holds; propose fewer changes"
        )
    unmark = unmark_partners(retired, list(view.records.values()), claimed)
    if len(planned.changes) + len(unmark) <= policy.max_changes:
        planned.add(unmark, unmarked=len(unmark))
    return planned


def _sources(view: PassView, aliases: Sequence[int]) -> tuple[Source, ...]:
    return tuple(
        Source(
            kind=SourceKind.MODEL,
            rollout_id=view.evidence[a].rollout_id,
            run_id=view.evidence[a].run_id,
            session_id=view.evidence[a].session_id,
        )
        for a in dict.fromkeys(aliases)
    )


def _may(view: PassView, aliases: Sequence[int], record: RecordVersion) -> bool:
    """Whether the cited evidence may change ``record`` (``cairn.authority``)."""
    at = _seen_at(view, aliases) if aliases else None
    return may_change(_sources(view, aliases), at, record)


def _rollout_ids(view: PassView, aliases: Sequence[int]) -> tuple[str, ...]:
    return tuple(view.evidence[a].rollout_id for a in dict.fromkeys(aliases))


def _seen_at(view: PassView, aliases: Sequence[int]) -> datetime:
    return max(view.evidence[a].completed_at for a in aliases)


def _add(
    view: PassView,
    change: AddChange,
    policy: ConsolidationPolicy,
    claimed: set[str],
    planned: Planned,
) -> None:
    digest = content_digest(change.content)
    repeat = next((v for v in view.records.values() if v.content_digest == digest), None)
    sources = _sources(view, change.evidence)
    seen_at = _seen_at(view, change.evidence)
    if repeat is not None and change.supersedes is None:
        # A run's evidence is no independent confirmation: the run may have recalled the very
        # record, and the model repeating what it read must not promote it (issue 17).
        return
    namespace, strategy = view.targets.for_category(change.category)
    record = NewRecord(
        namespace=namespace,
        strategy=strategy,
        category=change.category,
        content=change.content,
        confidence=min(change.confidence, policy.inferred_confidence_cap),
        tags=change.tags,
        sources=sources,
        seen_at=seen_at,
    )
    if change.supersedes is None:
        planned.add([Create(record=record)], added=1)
        return
    # The evidence decided: the old record keeps its row, marked and linked to the new one.
    old = view.records[change.supersedes]
    if not may_change(sources, seen_at, old):
        # Untrusted evidence contests what the user stated instead of replacing it.
        contest = Edge(kind=EdgeKind.CONTRADICTS, target=old.record_id)
        planned.add(
            [Create(record=record.model_copy(update={"edges": (contest,)}))], added=1, contested=1
        )
        return
    planned.add([Supersede(record_id=old.record_id, replacement=record)], added=1, superseded=1)


def _keeper(versions: Sequence[RecordVersion]) -> RecordVersion:
    return max(
        versions,
        key=lambda v: (v.trust is Trust.TRUSTED, v.last_seen_at, v.seen_count, v.record_id),
    )


def _merge(view: PassView, change: MergeChange, planned: Planned) -> None:
    cited = _sources(view, change.evidence)
    named = [view.records[a] for a in change.records]
    keeper = _keeper(named)
    # The keeper is the evidence against what it absorbs, as a contradiction's record that holds.
    absorbed = [
        v
        for v in named
        if v.record_id != keeper.record_id and may_change(keeper.sources, keeper.first_seen_at, v)
    ]
    planned.add([], refused=len(named) - 1 - len(absorbed))
    if not absorbed:
        return
    evidence = _rollout_ids(view, change.evidence)
    changes: list[Change] = [
        SupersedeBy(
            record_id=v.record_id,
            successor_id=keeper.record_id,
            reason="a repeat, merged into its successor",
            evidence=evidence,
        )
        for v in absorbed
    ]
    # The pass edits the keeper only if it may; what it adds comes with the sources it came from.
    if _may(view, change.evidence, keeper):
        versions = [keeper, *absorbed]
        text = change.content if content_digest(change.content) != keeper.content_digest else None
        tags = tuple(dict.fromkeys(t for v in versions for t in v.tags))
        confidence = max(v.confidence for v in versions)
        patch = RecordPatch(
            content=text,
            tags=tags if tags != keeper.tags else None,
            confidence=confidence if confidence != keeper.confidence else None,
        )
        if patch.model_dump(exclude_none=True):
            merged = union_sources(cited, *(v.sources for v in absorbed))
            changes.append(Revise(record_id=keeper.record_id, patch=patch, add_sources=merged))
    planned.add(changes, merged=len(absorbed))


def _retract(view: PassView, change: RetractChange) -> Retract:
    record = view.records[change.record]
    ids = " ".join(_rollout_ids(view, change.evidence))
    return Retract(record_id=record.record_id, reason=f"{change.reason} (evidence: {ids})"[:256])


def _contradiction(view: PassView, change: ContradictionChange, planned: Planned) -> None:
    first, second = (view.records[a] for a in change.records)
    holds = view.records[change.holds] if change.holds is not None else None
    changes = resolve_contradiction(
        (first, second),
        holds,
        evidence=_rollout_ids(view, change.evidence),
        reason=change.reason,
    )
    decided = any(isinstance(c, SupersedeBy) for c in changes)
    planned.add(changes, superseded=1 if decided else 0, contested=0 if decided else 1)
