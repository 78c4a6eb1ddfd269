"""The recall journal's hash chain, one per scope (issue 17, class 8).

Each store files a journal entry with the next ``sequence`` of its scope and, as
``previous``, the chain digest of the entry before it (``link``; ``link_json`` for a store
that keeps the entry's JSON text, dumped once for the text and the digest), and keeps the
scope's head (the last sequence and its digest) in the same transaction. So deleting an
entry, editing one (its digest no longer matches the ``previous`` of the next, or the head),
or moving entries around breaks the chain, and ``verify_from`` / ``verify_scope`` name the
first entry where it breaks.

What it does not do: someone who can rewrite the store may rewrite a chain from an entry to
the head consistently (the digests are not keyed); erasing a scope deletes its chain, which
then starts again at 1; entries filed before chains existed (sequence 0) are not in it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pydantic_core

from cairn.errors import JournalChainError
from cairn.models import JournalEntry, Scope
from cairn.ports import ChainHead, JournalStore

_PAGE = 100
# Fields added to JournalEntry after chains were first filed: left out of the digest while
# empty, so an entry filed before them keeps its digest.
_ADDED_LATER = ("channels", "shown")
# The canonical form: keys sorted, no spaces, text as is. A dump is a tree, so the encoder
# need not look for cycles (which changes nothing it writes).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
)


def chain_digest(entry: JournalEntry) -> str:
    """sha256 hex of the entry's canonical JSON, chain fields included."""
    return _digest(entry.model_dump(mode="json"))


def link(entry: JournalEntry, head: ChainHead | None) -> tuple[JournalEntry, ChainHead]:
    """``entry`` as the link after ``head`` (the first, without one), and the new head."""
    linked = entry.model_copy(
        update={
            "sequence": head.sequence + 1 if head else 1,
            "previous": head.digest if head else None,
        }
    )
    return linked, ChainHead(sequence=linked.sequence, digest=chain_digest(linked))


def link_json(entry: JournalEntry, head: ChainHead | None) -> tuple[str, ChainHead]:
    """``link`` for a store that keeps entries as JSON text: the linked entry's
    ``model_dump_json()``, byte for byte, and the new head, both from one dump of the entry."""
    sequence = head.sequence + 1 if head else 1
    document = entry.model_dump(mode="json")  # the chain fields keep their places in it
    document.update(sequence=sequence, previous=head.digest if head else None)
    # What model_dump_json writes: the dumped values, in field order, non-finite floats null.
    stored = pydantic_core.to_json(document, inf_nan_mode="null").decode("utf-8")
    return stored, ChainHead(sequence=sequence, digest=_digest(document))


def _digest(document: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of an entry's JSON-mode dump (which it may change)."""
    for name in _ADDED_LATER:  # absent, as in entries filed before they existed
        if not document[name]:
            del document[name]
    return hashlib.sha256(_CANONICAL.encode(document).encode("utf-8")).hexdigest()


def verify_from(journal: JournalStore, entry: JournalEntry) -> int:
    """Check the chain from ``entry`` to its scope's head; the number of links checked.
    ``JournalChainError`` names the first entry where it breaks; an unchained entry
    (sequence 0, filed before chains) checks nothing."""
    if entry.sequence == 0:
        return 0
    scope = entry.scope
    head = journal.head(scope)
    if head is None or head.sequence < entry.sequence:
        raise JournalChainError(
            entry.journal_id, entry.sequence, "the chain's head is missing or behind it"
        )
    checked, expected = 0, entry.sequence
    before = entry
    for current in _entries(journal, scope, after=entry.sequence - 1):
        if current.sequence != expected:
            reason = f"entry number {expected} is missing (found {current.sequence} next)"
            raise JournalChainError(current.journal_id, current.sequence, reason)
        if checked and current.previous != chain_digest(before):
            reason = "the entry before it was edited, or entries were moved"
            raise JournalChainError(before.journal_id, before.sequence, reason)
        if not checked and current != entry:
            reason = "it reads back differently from the chain"
            raise JournalChainError(entry.journal_id, entry.sequence, reason)
        before, expected, checked = current, expected + 1, checked + 1
    if before.sequence != head.sequence or chain_digest(before) != head.digest:
        reason = "the last entry does not match the chain's head (edited or deleted)"
        raise JournalChainError(before.journal_id, before.sequence, reason)
    return checked


def verify_scope(journal: JournalStore, scope: Scope) -> int:
    """Check the scope's whole chain (from its first entry); the number of links checked."""
    first = next(_entries(journal, scope, after=0), None)
    if first is None:
        if journal.head(scope) is not None:
            raise JournalChainError("(none)", 1, "every entry of the chain is gone")
        return 0
    if first.sequence != 1 or first.previous is not None:
        raise JournalChainError(first.journal_id, first.sequence, "the chain's start is gone")
    return verify_from(journal, first)


def _entries(journal: JournalStore, scope: Scope, *, after: int) -> Iterator[JournalEntry]:
    while True:
        page = journal.chain(scope, after=after, limit=_PAGE)
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].sequence
