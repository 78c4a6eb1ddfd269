"""The recall orchestrator: DESIGN §5 steps 1-7 in order, over the ports.

Steps 1-3 are the recall index's (``cairn.recall.index.index_of``: the process's index of the
backend when it keeps generations, else one built afresh for this recall): the same ranking a
scan gives (``cairn.recall.scan``), ranked only as far as the block can reach. Steps 4-6 are
pure functions of plain values; step 7 stores the journal entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.models import RecordVersion, Scope
from cairn.ports import Clock, Embedder, Stores
from cairn.recall.budget import Clamped, clamp
from cairn.recall.candidates import RecordFilter
from cairn.recall.dedup import deduplicate
from cairn.recall.index import RecallIndex, Search, index_of
from cairn.recall.journal import journal_entry
from cairn.recall.query import DEFAULT_POLICY, RecallPolicy, RecallQuery
from cairn.recall.read_now import marked_quarantined, read_now
from cairn.recall.render import block_of_lines


@dataclass(frozen=True, slots=True)
class RecalledEntry:
    """One selected record: the exact version shown, how it scored, and the text shown."""

    version: RecordVersion
    score: float
    relevance: float
    cosine: float | None
    keyword: float
    text: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class RecallCounts:
    """What each step did, for metrics (never content).

    ``candidates``: live heads read; ``below_floor``: left out by a floor (the cosine floor,
    or the keyword floor for rows ranked by keywords alone);
    ``unembedded``: candidates with no vector, scored by keywords alone; ``reembedded``: heads
    embedded on the fly; ``deduplicated``: paraphrases dropped; ``clamped``: survivors the
    budget left out; ``truncated``: selected entries cut to ``max_entry_bytes``;
    ``used_keyword_fallback``: a fallback ranked this recall (no embedder, or no cosine
    passed the floor: keywords, else cosines above ``weak_floor``); ``weak``: the block carries
    ``WEAK_LINE`` (a fallback over embedded rows chose its entries); ``contextual``:
    neighbours of a hit that context expansion admitted although a floor had left them out
    (not counted in ``below_floor``).
    """

    candidates: int
    below_floor: int
    unembedded: int
    reembedded: int
    deduplicated: int
    clamped: int
    truncated: int
    used_keyword_fallback: bool
    contextual: int = 0
    weak: bool = False


@dataclass(frozen=True, slots=True)
class Recollection:
    """A recall's answer: the rendered block, the entries in it, and its journal id."""

    block: str
    entries: tuple[RecalledEntry, ...]
    journal_id: str | None
    counts: RecallCounts


def recall(
    scope: Scope,
    query: RecallQuery,
    *,
    stores: Stores,
    embedder: Embedder | None,
    clock: Clock,
    policy: RecallPolicy = DEFAULT_POLICY,
    journal: bool = True,
    index: RecallIndex | None = None,
    where: RecordFilter | None = None,
) -> Recollection:
    """The block of ``scope``'s live memories most relevant to ``query``, within the budget.

    Only active heads of ``scope`` (as of ``query.as_of`` if set) can appear; with ``journal``
    the selection is journalled and ``replay`` can rebuild the block byte for byte. Steps 1-3
    run on ``index`` (default: ``index_of(stores)``), over the heads ``where`` accepts.
    """
    now = clock.now()
    index = index or index_of(stores)

    def search(narrowed: RecordFilter | None) -> Search:
        return index.search(
            scope, query, embedder=embedder, policy=policy, now=query.as_of or now, where=narrowed
        )

    found = search(where)
    ranked, any_trusted = read_now(stores, scope, found, search, where)
    unique = (
        found.deduplicated
        if found.deduplicated is not None and ranked is found.ranked
        else deduplicate(ranked, policy, limit=query.top_k, any_trusted=any_trusted)
    )
    clamped = clamp(unique.kept, policy, query.top_k, weak=found.weak)
    block = block_of_lines(clamped.lines, weak=clamped.weak)
    journal_id: str | None = None
    if journal:
        entry = journal_entry(
            scope,
            query,
            embedder=embedder.identity if embedder is not None else None,
            policy=policy,
            selected=clamped.selected,
            block=block,
            now=now,
            weak=clamped.weak,
        )
        entry = marked_quarantined(entry, clamped.selected)
        stores.journal.put(entry)
        journal_id = entry.journal_id
    counts = RecallCounts(
        candidates=found.candidates,
        below_floor=found.below_floor,
        unembedded=found.unembedded,
        reembedded=found.reembedded,
        deduplicated=unique.dropped,
        clamped=clamped.clamped,
        truncated=clamped.truncated,
        used_keyword_fallback=found.keyword_only,
        contextual=found.contextual,
        weak=clamped.weak,
    )
    return Recollection(
        block=block, entries=_recalled(clamped), journal_id=journal_id, counts=counts
    )


def _recalled(clamped: Clamped) -> tuple[RecalledEntry, ...]:
    return tuple(
        RecalledEntry(
            version=item.candidate.version,
            score=item.score,
            relevance=item.relevance,
            cosine=item.candidate.cosine,
            keyword=item.candidate.keyword,
            text=shown.text,
            truncated=shown.truncated,
        )
        for item, shown in zip(clamped.selected, clamped.entries, strict=True)
    )
