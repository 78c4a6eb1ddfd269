"""The rollup planner, pure: which complete batches become chunks, and the chunks they make.

Ten turns make a level-1 chunk, ten level-1 chunks a level-2 chunk, and so on (``FANOUT``).
Only complete batches are planned, so a chunk never changes once written: the pyramid grows at
its right edge and nothing is ever re-summarised. A level-``k`` chunk (``k >= 2``) is built
from its children alone (``parent_chunk`` takes chunks, not turns), so its summary can only be
written from theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cairn.chunks import MAX_SUMMARY_CHARS, Chunk, chunk_id
from cairn.history.turns import Turn
from cairn.models import Scope, derive_trust, union_sources

FANOUT = 10


def turn_batches(turns: Sequence[Turn], fanout: int = FANOUT) -> list[list[Turn]]:
    """The complete batches of ``fanout`` turns, oldest first; the rest waits for more turns."""
    whole = len(turns) - len(turns) % fanout
    return [list(turns[i : i + fanout]) for i in range(0, whole, fanout)]


def chunk_batches(
    level: Sequence[Chunk], above: Sequence[Chunk], fanout: int = FANOUT
) -> list[list[Chunk]]:
    """The complete batches of ``level``'s chunks (sorted by ``from_seq``) that no chunk of
    the level above covers yet, oldest first."""
    covered = above[-1].to_seq if above else 0
    pending = [c for c in level if c.from_seq > covered]
    whole = len(pending) - len(pending) % fanout
    return [list(pending[i : i + fanout]) for i in range(0, whole, fanout)]


def level_one_chunk(scope: Scope, turns: Sequence[Turn], summary: str, now: datetime) -> Chunk:
    """The level-1 chunk summarising ``turns`` (consecutive, one session), sourced to them."""
    first, last = turns[0], turns[-1]
    sources = union_sources(*(t.sources for t in turns))
    return Chunk(
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        session_id=first.session_id,
        chunk_id=chunk_id(1, first.seq, last.seq),
        level=1,
        from_seq=first.seq,
        to_seq=last.seq,
        period_start=first.at,
        period_end=last.at,
        units=last.seq - first.seq + 1,
        children=tuple(t.event_id for t in turns),
        summary=bounded(summary),
        sources=sources,
        trust=derive_trust(sources),
        created_at=now,
    )


def parent_chunk(children: Sequence[Chunk], summary: str, now: datetime) -> Chunk:
    """The chunk one level above ``children`` (consecutive, one level), with their sources."""
    first, last = children[0], children[-1]
    sources = union_sources(*(c.sources for c in children))
    return Chunk(
        memory_id=first.memory_id,
        actor_id=first.actor_id,
        session_id=first.session_id,
        chunk_id=chunk_id(first.level + 1, first.from_seq, last.to_seq),
        level=first.level + 1,
        from_seq=first.from_seq,
        to_seq=last.to_seq,
        period_start=first.period_start,
        period_end=last.period_end,
        units=last.to_seq - first.from_seq + 1,
        children=tuple(c.chunk_id for c in children),
        summary=bounded(summary),
        sources=sources,
        trust=derive_trust(sources),
        created_at=now,
    )


def bounded(summary: str) -> str:
    """The summary trimmed to what a chunk holds, cut at a word where one is near."""
    text = " ".join(summary.split())
    if len(text) <= MAX_SUMMARY_CHARS:
        return text
    cut = text[: MAX_SUMMARY_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_SUMMARY_CHARS // 2 else cut) + "…"
