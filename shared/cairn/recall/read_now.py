"""A search as read now: the memory's quarantine list applied to what the index ranked.

The recall index ranks with the stored trust labels; ``cairn.quarantine`` promises every read
shows a version with a quarantined source untrusted. ``read_now`` applies the list to a
scope's search (relabelled, the quarantined entries may collapse or yield to the untrusted
share, so the records the list does not cover are searched again on their own), and
``marked_quarantined`` names in a journal entry the entries it showed quarantined, so replay
renders them as shown. Recall (``cairn.recall.pipeline``) and the API's RetrieveMemoryRecords
both read through these two functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from cairn.models import JournalEntry, RecordVersion, Scope
from cairn.ports import Stores
from cairn.quarantine import QUARANTINED_FILTER, Quarantine, is_quarantined
from cairn.recall.candidates import RecordFilter
from cairn.recall.index import Search
from cairn.recall.ranking import Ranked


def read_now(
    stores: Stores,
    scope: Scope,
    found: Search,
    search: Callable[[RecordFilter | None], Search],
    where: RecordFilter | None,
) -> tuple[Sequence[Ranked], bool]:
    """``found``'s ranking as read now: a version with a quarantined source labelled untrusted
    (``cairn.quarantine``), and whether a trusted candidate is left.

    The index ranked only as far as the block could reach with the stored labels; relabelled,
    the quarantined entries may collapse or yield to the untrusted share, so the records the
    list does not cover are searched again on their own (``search`` over ``where`` narrowed to
    them) and both rankings are merged by score. ``found.ranked`` itself comes back, the same
    object, when the list changes nothing.
    """
    if found.quarantine is not None:  # read by the index with its rows, current with them
        quarantine = Quarantine(found.quarantine)
    elif stores.quarantine is not None:
        quarantine = Quarantine(stores.quarantine.entries(scope.memory_id))
    else:
        return found.ranked, found.any_trusted
    if not quarantine or not any(quarantine.covers(r.candidate.version) for r in found.ranked):
        return found.ranked, found.any_trusted

    def clear(version: RecordVersion) -> bool:
        return not quarantine.covers(version) and (where is None or where(version))

    rest = search(clear)
    merged: dict[str, Ranked] = {}
    for ranked in (*found.ranked, *rest.ranked):
        version = quarantine.view(ranked.candidate.version)
        viewed = replace(ranked, candidate=ranked.candidate.with_version(version))
        merged.setdefault(version.record_id, viewed)
    ordered = sorted(merged.values(), key=lambda r: -r.score)
    return ordered, rest.any_trusted


def marked_quarantined(entry: JournalEntry, selected: Sequence[Ranked]) -> JournalEntry:
    """``entry`` naming, in its ``QUARANTINED_FILTER``, the selected entries shown quarantined
    (``entry`` itself when none was), so replay renders them as they were shown."""
    shown = [r.candidate.version.record_id for r in selected if is_quarantined(r.candidate.version)]
    if not shown:
        return entry
    filters = {**entry.filters, QUARANTINED_FILTER: ",".join(shown)}
    return entry.model_copy(update={"filters": filters})
