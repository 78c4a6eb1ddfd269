"""Erasing one record and everything that restates it: ``erase_record``.

What ``cairn erase RECORD`` and ``LocalMemory.erase`` run. The *erased content* is every
content and body of every version of the record's lineage (the record and its successors,
``cairn.versioning.lineage``), read before anything is destroyed; its *source turns* are the
events those versions cite. Everything that needs the content to find what restates it runs
before the content is destroyed, so an erase that failed before step 4 is finished by running
it again. In this order:

1. the source turns, and every other turn of the scope that restates the erased content (the
   same sentence said again, the assistant repeating the fact), are deleted unless
   ``keep_events``: the sentence goes from the conversation too, and so do the history chunks
   summarising it (``ChunkStore.forget_turn``), and no rollout can stage it any more;
2. every pending rollout whose staged payload restates the erased content (its canonical form,
   ``cairn.models.canonical_content``, inside any text of the payload; texts of at least
   ``MIN_MATCH_CHARS``) or names a source turn
   is purged: the payload deleted, the rollout marked consumed. That covers run evidence
   waiting for consolidation and extraction batches whose window holds a source turn;
3. history chunks that restate the erased content or summarise a source turn, each session
   cut at the first turn of the level-1 chunk they begin in (with ``keep_events`` the rollup
   summarises the kept turns again on its next pass);
4. the lineage is erased (``RecordStore.erase``: tombstones with digests). That moves the
   scope's erasure count, so every extraction or consolidation plan read before it, among them
   any that read a payload purged in step 2, is refused at its apply (``cairn.erasure_fence``);
5. every other record that restates it is erased with its own lineage: a record whose content
   has the digest of an erased version (an exact restatement), a ``summary`` or ``episodic``
   record (session summary, episode, reflection) citing a source turn or the rollout the record
   came from (it restates that span of the conversation), a reflection made from an erased
   record (``cairn.reflection_records``: it carries its members' content),
   and a record citing a rollout purged in step 2 (applied before step 4 moved the count);
6. step 3 once more, for a rollup that read the turns before step 1;
7. the links from or to every erased record and their access counts (``cairn.links``).

Kept, by rule: other records extracted from the same turns (their content is their own; their
sources still name the turns, as after DeleteEvent), journal entries (they pin ids, versions
and digests, never a rendered block; the query text a caller typed stays), and queued notices
(they carry ids and a staging key, never content). Each step is idempotent. An erase that
failed before step 4 is finished by running it again; one that failed after it is finished as
far as the tombstones allow (they keep digests and sources: steps 1, 3 by turn, 4, 5 and 6 run
again, only the text matches of steps 2 and 3 are lost with the text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from cairn.errors import CairnError, EventNotFoundError, RecordNotFoundError
from cairn.models import (
    Conversational,
    Frozen,
    RecordVersion,
    Scope,
    Source,
    Status,
    canonical_content,
)
from cairn.paging import session_ids
from cairn.ports import MAX_PAGE_SIZE, Clock, StagingStore, Stores
from cairn.reflection_records import made_from
from cairn.rollout.index import RolloutState
from cairn.versioning import lineage

# A text shorter than this ("yes", "ok, thanks") is found in too many others to say they
# restate it: it is matched by id and digest only, never as a substring.
MIN_MATCH_CHARS = 16
# Strategies whose records restate a span of the conversation: a session summary, an episode
# and a reflection over episodes (both ``episodic``).
SPAN_STRATEGIES = frozenset({"summary", "episodic"})


class RecordErased(Frozen):
    """What erasing one record destroyed, store by store."""

    record_ids: tuple[str, ...]
    versions: int
    restating: tuple[str, ...] = ()
    rollouts: int = 0
    events: int = 0
    chunks: int = 0
    links: int = 0


class _Erased:
    """What the lineage said, read before it was destroyed."""

    def __init__(
        self, histories: dict[str, tuple[RecordVersion, ...]], said: Sequence[str]
    ) -> None:
        self.record_ids = frozenset(histories)
        versions = [v for history in histories.values() for v in history]
        live = [v for v in versions if v.status is not Status.ERASED]
        self.digests = {v.content_digest for v in versions}  # a tombstone keeps its digest
        texts = [v.content for v in live] + [v.body for v in live if v.body] + list(said)
        folded = {canonical_content(t) for t in texts}
        self.texts = {t for t in folded if len(t) >= MIN_MATCH_CHARS}
        sources = [s for v in versions for s in v.sources]
        self.turns = {(s.session_id, s.event_id) for s in sources if s.session_id and s.event_id}
        self.event_ids = {event for _, event in self.turns}
        self.rollout_ids = {s.rollout_id for s in sources if s.rollout_id}

    def restated_in(self, text: str) -> bool:
        folded = canonical_content(text)
        return any(erased in folded for erased in self.texts)

    def names_turn(self, sources: Sequence[Source]) -> bool:
        return any(s.event_id in self.event_ids for s in sources if s.event_id)


def erase_record(
    stores: Stores,
    scope: Scope,
    record_id: str,
    *,
    staging: StagingStore | None,
    clock: Clock,
    keep_events: bool = False,
) -> RecordErased:
    """Erase ``record_id``'s lineage and what restates it; see the module.
    ``RecordNotFoundError`` (nothing changed) if the scope has no such record."""
    histories = _lineage_histories(stores, scope, record_id)
    erased = _Erased(histories, _said(stores, scope, histories))
    events = 0 if keep_events else _delete_turns(stores, scope, erased)
    purged = _purge_rollouts(stores, scope, erased, staging, clock)
    chunks = _forget_chunks(stores, scope, erased)
    report = stores.records.erase(scope, record_id)
    record_ids, versions = list(report.record_ids), report.versions
    restating: list[str] = []
    for other in _restating(stores, scope, erased, purged):
        if other not in record_ids:
            more = stores.records.erase(scope, other)
            restating += [rid for rid in more.record_ids if rid not in record_ids]
            record_ids += [rid for rid in more.record_ids if rid not in record_ids]
            versions += more.versions
    chunks += _forget_chunks(stores, scope, erased)  # a rollup that read the turns meanwhile
    # After the records: a link job that raced the erase finds no live record left to link.
    links = stores.links.erase_records(scope, record_ids) if stores.links is not None else 0
    if stores.access is not None:
        stores.access.erase_records(scope, record_ids)
    return RecordErased(
        record_ids=tuple(record_ids),
        versions=versions,
        restating=tuple(restating),
        rollouts=len(purged),
        events=events,
        chunks=chunks,
        links=links,
    )


def _lineage_histories(
    stores: Stores, scope: Scope, record_id: str
) -> dict[str, tuple[RecordVersion, ...]]:
    histories = {record_id: stores.records.history(scope, record_id)}
    for rid in lineage(record_id, _Lazy(stores, scope, histories)):
        histories.setdefault(rid, stores.records.history(scope, rid))
    return histories


def _said(
    stores: Stores, scope: Scope, histories: dict[str, tuple[RecordVersion, ...]]
) -> list[str]:
    """The texts of the source turns still stored (what the user said, word for word)."""
    texts: list[str] = []
    cited = {(s.session_id, s.event_id) for h in histories.values() for v in h for s in v.sources}
    for session_id, event_id in sorted((s, e) for s, e in cited if s and e):
        try:
            event = stores.events.get_event(scope, session_id, event_id)
        except EventNotFoundError:
            continue
        texts += [part.text for part in event.payload if isinstance(part, Conversational)]
    return texts


class _Lazy(dict[str, tuple[RecordVersion, ...]]):
    """Histories read as ``lineage`` follows them."""

    def __init__(
        self, stores: Stores, scope: Scope, known: dict[str, tuple[RecordVersion, ...]]
    ) -> None:
        super().__init__(known)
        self._stores, self._scope = stores, scope

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self:
            try:
                self[key] = self._stores.records.history(self._scope, key)
            except RecordNotFoundError:
                return default
        return super().get(key, default)


def _purge_rollouts(
    stores: Stores, scope: Scope, erased: _Erased, staging: StagingStore | None, clock: Clock
) -> set[str]:
    """Step 2: the ids of the pending rollouts whose payload restated the content."""
    if stores.rollouts is None or staging is None:
        return set()
    purged: set[str] = set()
    for rollout in stores.rollouts.list_pending(scope, limit=MAX_PAGE_SIZE):
        if rollout.state is RolloutState.CLAIMED:
            continue  # nothing staged yet; staging reads the turns as they are then
        try:
            payload = json.loads(staging.get(scope, rollout.rollout_id))
        except (CairnError, ValueError):
            continue  # gone or unreadable: nothing of it can be handed to a model
        if not any(
            text in erased.event_ids or erased.restated_in(text) for text in _texts(payload)
        ):
            continue
        staging.delete(scope, rollout.rollout_id)
        stores.rollouts.mark(scope, rollout.rollout_id, RolloutState.CONSUMED, now=clock.now())
        purged.add(rollout.rollout_id)
    return purged


def _texts(value: object) -> Iterator[str]:
    """Every string in a decoded JSON document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _restating(stores: Stores, scope: Scope, erased: _Erased, purged: set[str]) -> list[str]:
    """Step 3: the records (not erased yet) that restate the erased content."""
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = stores.records.list_records(
            scope, include_inactive=True, limit=MAX_PAGE_SIZE, cursor=cursor
        )
        for head in page.items:
            rollouts = {s.rollout_id for s in head.sources if s.rollout_id}
            summary = head.strategy in SPAN_STRATEGIES and (
                erased.names_turn(head.sources) or bool(rollouts & erased.rollout_ids)
            )
            reflects = bool(made_from(head).keys() & erased.record_ids)
            if head.content_digest in erased.digests or summary or reflects or rollouts & purged:
                found.append(head.record_id)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _delete_turns(stores: Stores, scope: Scope, erased: _Erased) -> int:
    """Step 1: the source turns and every other turn of the scope that restates the erased
    content (each delete also forgets the chunks summarising it)."""
    doomed = set(erased.turns)
    for session_id in session_ids(stores.events, scope):
        cursor: str | None = None
        while True:
            page = stores.events.list_events(scope, session_id, limit=MAX_PAGE_SIZE, cursor=cursor)
            for event in page.items:
                texts = [p.text for p in event.payload if isinstance(p, Conversational)]
                if any(erased.restated_in(text) for text in texts):
                    doomed.add((session_id, event.event_id))
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    deleted = 0
    for session_id, event_id in sorted(doomed):
        try:
            stores.events.delete_event(scope, session_id, event_id)
            deleted += 1
        except EventNotFoundError:
            continue  # deleted already: gone either way
    return deleted


def _forget_chunks(stores: Stores, scope: Scope, erased: _Erased) -> int:
    """Step 5: chunks that summarise a source turn or restate the erased content, cut at the
    first turn of the level-1 chunk they begin in (``cairn.chunks.summarising``)."""
    if stores.chunks is None:
        return 0
    forgotten = 0
    for session_id in stores.chunks.chunk_sessions(scope):
        chunks = stores.chunks.list_chunks(scope, session_id)
        level_one = [c for c in chunks if c.level == 1]
        cut: int | None = None
        for chunk in chunks:
            if erased.restated_in(chunk.summary) or (
                chunk.level == 1 and erased.event_ids & set(chunk.children)
            ):
                cut = chunk.from_seq if cut is None else min(cut, chunk.from_seq)
        first = next((c for c in level_one if cut is not None and c.to_seq >= cut), None)
        if first is not None:
            forgotten += stores.chunks.forget_turn(scope, session_id, first.children[0])
    return forgotten
