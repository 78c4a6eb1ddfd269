"""Contradictions: two live records that cannot both hold, resolved without deleting anything.

A pass's model names pairs of records about one subject with incompatible claims ("prefers
tea" and "switched to coffee in March") and, when the evidence or the records decide it,
which one holds now. ``resolve_contradiction`` turns that into changes:

- decided: the other record is superseded by the one that holds (``SupersedeBy``): it keeps its
  row and content, marked ``superseded``, linked to its successor, with the reason and the
  evidence rollout ids that decided it. Recall stops returning it.
- undecided: both stay live and each gains a ``contradicts`` edge to the other, so recall can
  label them contested (``cairn.recall.render``) and a later pass sees the pair.

Authority (DESIGN §4): an inferred record never retires one the user stated, and an earlier
user statement never retires a later one: such a decision is kept as contested instead. A
decision also clears the contested mark the survivor carried for the pair, and
``unmark_partners`` clears marks pointing at records the pass retires otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cairn.authority import may_change
from cairn.changes import Change, RecordPatch, Revise, SupersedeBy
from cairn.models import Edge, EdgeKind, RecordVersion

MAX_REASON_CHARS = 256


def contested_with(version: RecordVersion) -> set[str]:
    """Ids of the records ``version`` is marked as contradicting."""
    return {e.target for e in version.edges if e.kind is EdgeKind.CONTRADICTS}


def is_contested(version: RecordVersion) -> bool:
    """Whether ``version`` is one side of an undecided contradiction."""
    return bool(contested_with(version))


def _decision_stands(holds: RecordVersion, other: RecordVersion, evidence: Sequence[str]) -> bool:
    """The record that holds is the evidence against the other: it retires it only when its
    authority may (``cairn.authority``): never an inferred record against what the user
    stated (whatever the pass cites, its evidence is the model's reading), and a user
    statement only one made no later than it."""
    return may_change(holds.sources, holds.first_seen_at, other)


def resolve_contradiction(
    pair: tuple[RecordVersion, RecordVersion],
    holds: RecordVersion | None,
    *,
    evidence: Sequence[str] = (),
    reason: str | None = None,
) -> list[Change]:
    """The changes that settle ``pair``: supersede the record that no longer holds by the one
    that does, or mark both contested when nothing decides (or the decision is not humble)."""
    first, second = pair
    if holds is not None:
        other = second if holds.record_id == first.record_id else first
        if _decision_stands(holds, other, evidence):
            return _decided(holds, other, evidence, reason)
    return mark_contested(first, second)


def _decided(
    holds: RecordVersion, other: RecordVersion, evidence: Sequence[str], reason: str | None
) -> list[Change]:
    why = (reason or "contradicted by a record that holds now")[:MAX_REASON_CHARS]
    changes: list[Change] = [
        SupersedeBy(
            record_id=other.record_id,
            successor_id=holds.record_id,
            reason=why,
            evidence=tuple(evidence),
        )
    ]
    if other.record_id in contested_with(holds):
        changes.append(_without_marks(holds, {other.record_id}))
    return changes


def mark_contested(first: RecordVersion, second: RecordVersion) -> list[Change]:
    """A revision of each record adding a ``contradicts`` edge to the other (none for a record
    already marked)."""
    changes: list[Change] = []
    for version, partner in ((first, second), (second, first)):
        if partner.record_id in contested_with(version):
            continue
        edge = Edge(kind=EdgeKind.CONTRADICTS, target=partner.record_id)
        changes.append(
            Revise(record_id=version.record_id, patch=RecordPatch(edges=(*version.edges, edge)))
        )
    return changes


def _without_marks(version: RecordVersion, partners: set[str]) -> Revise:
    kept = tuple(
        e for e in version.edges if not (e.kind is EdgeKind.CONTRADICTS and e.target in partners)
    )
    return Revise(record_id=version.record_id, patch=RecordPatch(edges=kept))


def unmark_partners(
    retired: Iterable[str], shown: Sequence[RecordVersion], claimed: set[str]
) -> list[Change]:
    """Revisions that clear the contested marks shown records carry for records this pass
    retires (a contradiction needs two live sides); records other changes name are left."""
    gone = set(retired)
    return [
        _without_marks(version, gone)
        for version in shown
        if version.record_id not in claimed and contested_with(version) & gone
    ]
