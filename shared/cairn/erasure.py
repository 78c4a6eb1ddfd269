"""Erasing an actor: every place one actor's memory and conversation live, in one call.

``erase_actor(stores, scope, staging=...)`` is what ``cairn erase --all-of-actor`` and the API's
DeleteMemory (for each actor) run, so the two can never disagree on what an erase covers:

1. the rollout index (counters and rollouts), first, so no sweep stages anything again;
2. the staged rollout payloads, which hold conversation text (S3, or files beside the store);
3. the events, 4. the records (tombstones with digests stay), 5. the recall journal,
6. the record directory's placements (where the AgentCore API filed records),
7. the history pyramid's chunks (summaries of the events), after the events, so a rollup that
   raced the erase finds no turns left to summarise;
8. the links between its records and their access counts (``cairn.links``), after the
   records, so a link job that raced the erase finds no live record left to link;
9. what the background jobs noted for the actor (``JobLog.erase_markers``: cursors and
   digests, no content), last, so a job that raced the erase starts afresh.

``erase_session(stores, scope, session_id)`` does the same for one conversation: its chunks,
its events, then its chunks once more (a rollup that read the turns before they went).

Each store's erase is idempotent, so an erase that failed halfway is finished by running it
again. A store the backend does not have (no rollout index, no directory) holds nothing to
erase; without ``staging`` no payload is touched, which is only right where nothing was staged.
"""

from __future__ import annotations

from cairn.errors import EventNotFoundError
from cairn.models import Frozen, Scope
from cairn.ports import MAX_PAGE_SIZE, EraseReport, StagingStore, Stores


class ActorErased(Frozen):
    """What erasing one actor destroyed, store by store."""

    records: EraseReport
    events: int
    journal_entries: int
    placements: int = 0
    rollouts: int = 0
    payloads: int = 0
    chunks: int = 0
    links: int = 0
    access_counts: int = 0
    job_markers: int = 0


class SessionErased(Frozen):
    """What erasing one session destroyed."""

    events: int
    chunks: int


def erase_actor(stores: Stores, scope: Scope, *, staging: StagingStore | None) -> ActorErased:
    """Destroy everything of ``scope``'s actor in ``stores`` and ``staging``; see the module."""
    rollouts = stores.rollouts.erase_scope(scope) if stores.rollouts is not None else 0
    payloads = staging.erase_scope(scope) if staging is not None else 0
    events = stores.events.erase_scope(scope)
    records = stores.records.erase_scope(scope)
    journal = stores.journal.erase_scope(scope)
    placements = stores.directory.erase_scope(scope) if stores.directory is not None else 0
    chunks = stores.chunks.erase_scope(scope) if stores.chunks is not None else 0
    links = stores.links.erase_scope(scope) if stores.links is not None else 0
    counted = stores.access.erase_scope(scope) if stores.access is not None else 0
    markers = stores.jobs.erase_markers(scope) if stores.jobs is not None else 0
    return ActorErased(
        records=records,
        events=events,
        journal_entries=journal,
        placements=placements,
        rollouts=rollouts,
        payloads=payloads,
        chunks=chunks,
        links=links,
        access_counts=counted,
        job_markers=markers,
    )


def erase_session(stores: Stores, scope: Scope, session_id: str) -> SessionErased:
    """Destroy one session's events and every chunk summarising them; see the module."""
    chunks = stores.chunks.erase_session(scope, session_id) if stores.chunks is not None else 0
    events = 0
    while True:
        page = stores.events.list_events(scope, session_id, limit=MAX_PAGE_SIZE)
        for event in page.items:
            try:
                stores.events.delete_event(scope, session_id, event.event_id)
                events += 1
            except EventNotFoundError:
                continue  # deleted meanwhile: gone either way
        if not page.items:
            break
    if stores.chunks is not None:
        chunks += stores.chunks.erase_session(scope, session_id)
    return SessionErased(events=events, chunks=chunks)
