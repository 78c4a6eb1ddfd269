"""Replay: rebuild a journalled recall block from exactly the versions it pinned.

Replay never searches. It reads the journal entry, fetches each pinned version with
``get_version`` (an erased one comes back as its tombstone), renders them in the journalled
order with the journalled entry size, and compares the digest with the one recorded. A record
erased since shows as ``(erased)`` and the mismatch is reported, not hidden.

Replay never renders a forgery: a pinned version whose content no longer has the digest the
journal pinned (content and digest both rewritten in the store) refuses the whole replay with
``ReplayMismatchError`` naming the records, and a version row that fails its own digest check
raises ``CorruptRecordError`` naming it. An erased version keeps the pinned digest in its
tombstone, so erasure is reported, never refused.

An entry the recall showed quarantined (``cairn.quarantine``; the journal's ``quarantined``
filter) is rendered quarantined again, and one it showed unquarantined is rendered as stored, so
a replay shows what was shown then whatever the quarantine list holds now.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.errors import RecordNotFoundError, ReplayMismatchError
from cairn.journal_chain import verify_from
from cairn.models import JournalEntry, RecordVersion, Scope, Status
from cairn.ports import Stores
from cairn.quarantine import QUARANTINED_FILTER, quarantined_view
from cairn.recall.budget import block_entry
from cairn.recall.journal import block_digest
from cairn.recall.query import DEFAULT_POLICY
from cairn.recall.render import BlockEntry, render_block


@dataclass(frozen=True, slots=True)
class Replay:
    """A journalled recall, re-materialised; ``matches`` iff the block is byte-identical."""

    journal: JournalEntry
    versions: tuple[RecordVersion, ...]
    block: str
    block_digest: str
    matches: bool
    erased: tuple[str, ...]
    missing: tuple[str, ...]


def replay(scope: Scope, journal_id: str, *, stores: Stores) -> Replay:
    """Re-render journal entry ``journal_id`` of ``scope`` from its pinned versions, no search.

    Raises ``JournalNotFoundError`` when the entry is not in this scope, ``JournalChainError``
    when the scope's journal chain is broken from this entry to its head (an entry deleted,
    edited or moved: ``cairn.journal_chain``), ``ReplayMismatchError`` when a pinned version
    is not what the journal pinned.
    """
    entry = stores.journal.get(scope, journal_id)
    verify_from(stores.journal, entry)
    max_entry_bytes = int(entry.policy.get("max_entry_bytes") or DEFAULT_POLICY.max_entry_bytes)
    versions: list[RecordVersion] = []
    entries: list[BlockEntry] = []
    missing: list[str] = []
    # Shown quarantined then: rendered so now, whatever the quarantine list says today.
    quarantined = set(filter(None, entry.filters.get(QUARANTINED_FILTER, "").split(",")))
    for pinned in entry.selected:
        try:
            version = stores.records.get_version(scope, pinned.record_id, pinned.version)
        except RecordNotFoundError:
            missing.append(pinned.record_id)
            continue
        versions.append(version)
        shown = quarantined_view(version) if version.record_id in quarantined else version
        entries.append(block_entry(shown, max_entry_bytes))
    pinned_digests = {p.record_id: p.content_digest for p in entry.selected}
    forged = [v.record_id for v in versions if v.content_digest != pinned_digests[v.record_id]]
    if forged:
        raise ReplayMismatchError(
            journal_id, forged, "their content is not what the journal pinned"
        )
    block = render_block(entries, weak=entry.weak)
    digest = block_digest(block)
    return Replay(
        journal=entry,
        versions=tuple(versions),
        block=block,
        block_digest=digest,
        matches=digest == entry.block_digest and not missing,
        erased=tuple(v.record_id for v in versions if v.status is Status.ERASED),
        missing=tuple(missing),
    )
