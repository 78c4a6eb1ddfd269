"""What a recall over both channels shows: its hits, the passages turns and chunks become, and
the block (``hits_block``).

A turn's passage is its messages, one ``role: text`` line each, with the trust of who spoke in
it; a chunk's is its summary with the chunk's own trust. ``cairn.history.search`` builds them
from what the stores list; ``cairn.history.journalled`` builds the same ones from the ids a
journal entry pinned, so a replayed block is the block that was shown.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from cairn.chunks import Chunk
from cairn.history.axes import Kind
from cairn.history.turns import role_source
from cairn.models import Event, RecordVersion, Role, Trust, derive_trust
from cairn.recall.index.passages import Passage
from cairn.recall.render import CAVEAT, one_line, quote
from cairn.rollout.index import messages_of
from cairn.visible_text import neutralised

HEADING = "## Recalled from memory and history"
EMPTY_LINE = "(nothing recalled)"


@dataclass(frozen=True, slots=True)
class Hit:
    """One thing recalled: a record, a turn or a chunk, with its score in [0, 1]."""

    kind: Kind
    ref: str  # record id, event id or chunk id
    session_id: str | None
    at: datetime  # a record's date, a turn's time, a chunk's period start
    text: str
    trust: Trust
    score: float
    relevance: float
    in_period: bool  # whether it falls in a period the query names
    level: int = 0  # a chunk's level
    record: RecordVersion | None = None


@dataclass(frozen=True, slots=True)
class Piece:
    """A turn or a chunk as the passage index searches it, with what its hit shows."""

    kind: Kind
    session_id: str
    trust: Trust
    level: int
    passage: Passage


def turn_piece(event: Event, session_id: str) -> Piece | None:
    """The turn's passage; ``None`` for a branch's event or one with no messages."""
    messages = [m for _, m in messages_of(event)]
    if event.branch is not None or not messages:
        return None
    text = "\n".join(f"{m.role.value}: {m.text}" for m in messages)
    trust = _trust_of(frozenset(m.role for m in messages))
    at = event.event_timestamp
    return Piece("turns", session_id, trust, 0, Passage(event.event_id, at, at, text))


def chunk_piece(chunk: Chunk, session_id: str) -> Piece:
    passage = Passage(chunk.chunk_id, chunk.period_start, chunk.period_end, chunk.summary)
    return Piece("chunks", session_id, chunk.trust, chunk.level, passage)


def piece_hit(piece: Piece, score: float, relevance: float, in_period: bool) -> Hit:
    p = piece.passage
    return Hit(
        piece.kind,
        p.ref,
        piece.session_id,
        p.start,
        p.text,
        piece.trust,
        score,
        relevance,
        in_period,
        piece.level,
    )


def record_hit(
    version: RecordVersion, score: float, relevance: float, in_period: bool, *, text: str
) -> Hit:
    at = version.valid_from or version.first_seen_at
    return Hit(
        "records",
        version.record_id,
        None,
        at,
        text,
        version.trust,
        score,
        relevance,
        in_period,
        record=version,
    )


@functools.cache
def _trust_of(roles: frozenset[Role]) -> Trust:
    """A turn's trust from who spoke in it (it depends on the kinds of speaker alone)."""
    return derive_trust(tuple(role_source(role, "session") for role in sorted(roles)))


def hits_block(hits: tuple[Hit, ...]) -> str:
    """The hits as a block: a fixed heading and recall's caveat, then one line a hit with its
    kind, date, trust and text (untrusted text quoted; invisible characters as markers)."""
    lines = [HEADING, CAVEAT]
    for hit in hits:
        if hit.trust is Trust.TRUSTED:
            shown = neutralised(one_line(hit.text))
        else:
            shown = quote(neutralised(hit.text, controls=False))
        what = {"records": "record", "turns": "turn", "chunks": f"summary L{hit.level}"}[hit.kind]
        where = f" | session {neutralised(hit.session_id)}" if hit.session_id else ""
        period = " | in the period asked about" if hit.in_period else ""
        lines.append(
            f"- {what} {hit.ref}{where} | {hit.at:%Y-%m-%d %H:%M} | {hit.trust.value}{period}"
            f" | {shown}"
        )
    if not hits:
        lines.append(EMPTY_LINE)
    return "\n".join(lines)
