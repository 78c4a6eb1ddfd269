"""History chunks: the summaries that make a session's turns a drillable pyramid.

A session's turns (its main-branch events that carry conversation text) are numbered 1, 2, 3 ...
in (timestamp, event id) order, at the time they are rolled up. A level-1 chunk summarises a
complete batch of turns; a level-``k`` chunk (``k >= 2``) summarises a complete batch of
level-``k-1`` chunks and is written from their summaries only. Every chunk says exactly what it
covers:

- ``from_seq`` / ``to_seq``: the turn numbers it covers, at every level (so the chunks of one
  level tile the turns ``1..n`` without a gap or an overlap);
- ``period_start`` / ``period_end``: the timestamps of its first and last turn;
- ``units``: how many turns it covers (``to_seq - from_seq + 1``);
- ``children``: the event ids it summarises (level 1) or the chunk ids (level 2 and above),
  in order, so drill-down never dead-ends.

A chunk's ``sources`` are those of what it summarises (one per kind: a user turn is ``user``, an
assistant turn ``model``, a tool turn ``tool``); ``trust`` is derived from them exactly as a
record's is, so a summary of untrusted turns is untrusted and a level above never rises.

Chunks are immutable. The store refuses one that does not extend its level contiguously
(``check_extends``) or, above level 1, whose children are not exactly the level below over
its span (``check_children``); every backend calls these same functions.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Self

from pydantic import Field, model_validator

from cairn.errors import ChunkConflictError, InvalidInputError
from cairn.models import (
    ActorId,
    Frozen,
    Label,
    MemoryId,
    Scope,
    SessionId,
    Source,
    Trust,
    UtcDatetime,
    derive_trust,
)

MAX_SUMMARY_CHARS = 4000
MAX_LEVEL = 9
_CHUNK_ID = re.compile(r"^L(\d)-(\d{8})-(\d{8})$")


def chunk_id(level: int, from_seq: int, to_seq: int) -> str:
    """The id a chunk of this level and span has in its session: ``L1-00000001-00000010``.

    Deterministic, so a retried rollup names the chunk it already wrote instead of a second one.
    """
    return f"L{level}-{from_seq:08d}-{to_seq:08d}"


def parse_chunk_id(value: str) -> tuple[int, int, int]:
    """``(level, from_seq, to_seq)`` of a chunk id; ``InvalidInputError`` if it is not one."""
    match = _CHUNK_ID.match(value)
    if match is None:
        raise InvalidInputError(
            f"{value!r} is not a history chunk id; chunk ids look like L1-00000001-00000010"
        )
    return int(match[1]), int(match[2]), int(match[3])


class Chunk(Frozen):
    """One immutable summary of a span of a session's turns; see the module docstring."""

    memory_id: MemoryId
    actor_id: ActorId
    session_id: SessionId
    chunk_id: Label
    level: int = Field(ge=1, le=MAX_LEVEL)
    from_seq: int = Field(ge=1)
    to_seq: int = Field(ge=1)
    period_start: UtcDatetime
    period_end: UtcDatetime
    units: int = Field(ge=1)
    children: tuple[Label, ...] = Field(min_length=1, max_length=100)
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    sources: tuple[Source, ...] = Field(min_length=1)
    trust: Trust
    created_at: UtcDatetime

    @model_validator(mode="after")
    def _pointers_agree(self) -> Self:
        if self.to_seq < self.from_seq:
            raise ValueError("to_seq precedes from_seq")
        if self.units != self.to_seq - self.from_seq + 1:
            raise ValueError("units must equal the number of turns from from_seq to to_seq")
        if self.period_end < self.period_start:
            raise ValueError("period_end precedes period_start")
        if self.chunk_id != chunk_id(self.level, self.from_seq, self.to_seq):
            raise ValueError("chunk_id must be chunk_id(level, from_seq, to_seq)")
        if self.level == 1 and len(self.children) != self.units:
            raise ValueError("a level-1 chunk names one event per turn it covers")
        if len(set(self.children)) != len(self.children):
            raise ValueError("a chunk names each child once")
        if self.trust is not derive_trust(self.sources):
            raise ValueError("trust must equal the join of the sources")
        if not self.summary.strip():
            raise ValueError("summary must contain text, not only whitespace")
        return self

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)

    def same_content(self, other: Chunk) -> bool:
        """Whether ``other`` is this chunk again (a retry), creation time aside."""
        return self.model_dump(exclude={"created_at"}) == other.model_dump(exclude={"created_at"})


def check_extends(chunk: Chunk, last_of_level: Chunk | None) -> None:
    """Refuse ``chunk`` unless it starts right after ``last_of_level`` (or at turn 1)."""
    expected = 1 if last_of_level is None else last_of_level.to_seq + 1
    if chunk.from_seq != expected:
        raise ChunkConflictError(
            chunk.chunk_id,
            f"level {chunk.level} continues at turn {expected}, not {chunk.from_seq} "
            "(chunks of one level are contiguous and never overlap)",
        )
    if last_of_level is not None and chunk.period_start < last_of_level.period_end:
        raise ChunkConflictError(chunk.chunk_id, "its period starts before the previous chunk's")


def check_children(chunk: Chunk, below: Sequence[Chunk]) -> None:
    """Refuse a chunk above level 1 unless ``below`` (the chunks its ``children`` name, as
    found in the store) are exactly the level below over its span, in order."""
    if chunk.level == 1:
        return
    found = {c.chunk_id: c for c in below}
    missing = [child for child in chunk.children if child not in found]
    if missing:
        raise ChunkConflictError(chunk.chunk_id, f"its child {missing[0]!r} is not stored")
    ordered = [found[child] for child in chunk.children]
    spans_ok = all(c.level == chunk.level - 1 for c in ordered) and all(
        a.to_seq + 1 == b.from_seq for a, b in itertools.pairwise(ordered)
    )
    if not spans_ok or (ordered[0].from_seq, ordered[-1].to_seq) != (chunk.from_seq, chunk.to_seq):
        raise ChunkConflictError(
            chunk.chunk_id, "its children are not the contiguous level below over its span"
        )


def admit(
    scope: Scope,
    chunk: Chunk,
    *,
    stored: Chunk | None,
    last_of_level: Chunk | None,
    below: Sequence[Chunk],
) -> Chunk | None:
    """What a store does with a put, decided the same way by every backend.

    ``stored`` is what the store holds under the chunk's id, ``last_of_level`` the session's
    last chunk of its level, ``below`` the stored chunks its children name. Returns the stored
    chunk when this is a retry of it (write nothing), ``None`` when ``chunk`` is to be written;
    raises ``InvalidInputError`` (another scope) or ``ChunkConflictError`` otherwise.
    """
    if chunk.scope != scope:
        raise InvalidInputError(
            f"chunk {chunk.chunk_id!r} belongs to {chunk.scope}, not to {scope}; "
            "store it in its own scope"
        )
    if stored is not None:
        if stored.same_content(chunk):
            return stored
        raise ChunkConflictError(chunk.chunk_id, "another chunk is stored under its id")
    check_extends(chunk, last_of_level)
    check_children(chunk, below)
    return None


def summarising(chunks: Sequence[Chunk], event_id: str) -> list[Chunk]:
    """The chunks that must go when the turn ``event_id`` is deleted: the level-1 chunk that
    summarises it and every chunk, of any level, that ends at or after that chunk's first turn.

    Cutting each level at the same turn keeps every level contiguous: the rollup then numbers
    the remaining turns on from the cut and summarises them again, without the deleted one.
    """
    first = next((c for c in chunks if c.level == 1 and event_id in c.children), None)
    if first is None:
        return []
    return [c for c in chunks if c.to_seq >= first.from_seq]
