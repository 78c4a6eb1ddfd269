"""The background jobs that run on a schedule, over one memory or every configured memory.

``run_scheduled_jobs(stores, model, memory_id, embedder=..., clock=..., embed_with=...)`` runs
access counting, link generation, evolution, reflection, then decay over the memory (each
honours its own switch and logs its own run; evolution, reflection and decay are off unless
switched on; reflection embeds its insights with ``embed_with`` and starts no model call at
or after ``until``, and no job starts an actor at or after it: its run is ``partial``); the
embedded history worker calls it for a memory at most once per ``SCHEDULED_EVERY`` after a
rollup pass, and the scheduled jobs Lambda (``functions/jobs``) for every memory the store
configures (``memory_ids``), every ``SCHEDULED_EVERY``. Access first: the link job reads the
same records, and counting is cheap; decay last, as it reads the counts just made.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from cairn.history.access import run_access_job
from cairn.history.decay import run_decay_job
from cairn.history.evolution import run_evolution_job
from cairn.history.linking import run_link_job
from cairn.history.reflection import run_reflection_job
from cairn.jobs import JobRun
from cairn.models import EmbedderId
from cairn.ports import MAX_PAGE_SIZE, Clock, Embedder, ModelProvider, Stores

SCHEDULED_EVERY = timedelta(minutes=15)


def run_scheduled_jobs(
    stores: Stores,
    model: ModelProvider,
    memory_id: str,
    *,
    embedder: EmbedderId | None,
    clock: Clock,
    embed_with: Embedder | None = None,
    until: datetime | None = None,
) -> tuple[JobRun, ...]:
    """Access counting, link generation, evolution (from the links just made), reflection
    (over the counts just made), then decay, over ``memory_id``; their five runs."""
    counted = run_access_job(stores, memory_id, clock=clock, until=until)
    linked = run_link_job(stores, model, memory_id, embedder=embedder, clock=clock, until=until)
    evolved = run_evolution_job(stores, model, memory_id, clock=clock, until=until)
    reflected = run_reflection_job(
        stores, model, memory_id, embedder=embed_with, clock=clock, until=until
    )
    decayed = run_decay_job(stores, memory_id, clock=clock, until=until)
    return (counted, linked, evolved, reflected, decayed)


def memory_ids(stores: Stores) -> list[str]:
    """Every memory the stores configure, by id (none without a memory config store)."""
    if stores.memories is None:
        return []
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = stores.memories.list_memories(limit=MAX_PAGE_SIZE, cursor=cursor)
        found += [memory.memory_id for memory in page.items]
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
