"""Recall by time, by typed link and by drill-down, across both channels of a scope.

- ``by_period(from, to)``: what the scope holds for a period, merged into one timeline, oldest
  first: live records by ``valid_from`` (``first_seen_at`` when the writer did not know when the
  fact began to hold), turns by their timestamp, chunks whose period overlaps it. ``kinds``
  selects the channels.
- ``neighbors(record_id)``: the live records one typed edge away, out of the record and into
  it, over the curated vocabulary only (``LINK_KINDS``): the records' own edges, and the links
  kept beside them (``cairn.links``; given ``links``), each labelled with its trust (an edge's
  is its record's, a link's its own sources'). An edge naming something that is not a live
  record of the scope (a session id, a retired record) is reported unresolved, never followed
  out of the scope.
- ``about_time(question)``: the periods a question names ("in May 2023", "last March", "two
  weeks ago"; ``cairn.recall.temporal``), resolved against the conversation's own time (its
  latest turn, not the wall clock), each read as ``by_period``, merged.
- ``children(chunk)``: a chunk's turns (level 1) or chunks (level 2 and above), in order;
  ``enclosing(turn)``: the chunks that cover a turn, level 1 upward.

Records are read through a head index (``cairn.recall.index.heads``): given ``heads`` (the
backend's, ``heads_of(stores)``), a view of the live heads kept current by the store's
generations, so a period is a bisection and a record's incoming links one lookup; without it,
the heads are listed for the call (a scan). Turns and chunks are read through the ports, every
session's events and chunks: exact, and linear in the history; given ``stores`` (the backend's),
from the list ``recall_both`` keeps per history generation (``cairn.history.listing``), so an
unchanged scope is not listed again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from cairn.chunks import Chunk
from cairn.errors import InvalidInputError
from cairn.history.turns import role_source, session_events
from cairn.links import LINK_KINDS
from cairn.models import EdgeKind, Event, RecordVersion, Scope, Trust, derive_trust
from cairn.paging import session_ids
from cairn.ports import ChunkStore, EventStore, LinkStore, RecordStore, Stores
from cairn.recall.index.heads import HeadIndex
from cairn.recall.signals import record_date
from cairn.recall.temporal import query_periods
from cairn.rollout.index import messages_of

Kind = Literal["records", "turns", "chunks"]
ALL_KINDS: frozenset[Kind] = frozenset({"records", "turns", "chunks"})


def kinds_of(names: Iterable[str]) -> frozenset[Kind]:
    """The kinds ``names`` names; ``InvalidInputError`` for none or an unknown one."""
    found = frozenset(names)
    if not found or not found <= ALL_KINDS:
        raise InvalidInputError("channels must name one or more of records, turns, chunks")
    return frozenset(k for k in ALL_KINDS if k in found)


MAX_RESULTS = 1000


@dataclass(frozen=True, slots=True)
class PeriodHit:
    """One thing of the period: a record, a turn or a chunk, with when it falls."""

    kind: Kind
    at: datetime
    ref: str  # record id, event id or chunk id
    session_id: str | None
    text: str
    trust: Trust
    level: int = 0  # a chunk's level


def by_period(
    records: RecordStore,
    events: EventStore,
    chunks: ChunkStore | None,
    scope: Scope,
    start: datetime,
    end: datetime,
    *,
    kinds: frozenset[Kind] = ALL_KINDS,
    limit: int = 100,
    heads: HeadIndex | None = None,
    stores: Stores | None = None,
) -> tuple[PeriodHit, ...]:
    """What ``scope`` holds from ``start`` to ``end`` (both included), oldest first, at most
    ``limit``; see the module for what falls in a period (and for ``stores``)."""
    _check_period(start, end, kinds, limit)
    hits: list[PeriodHit] = []
    if "records" in kinds:
        for head in (heads or HeadIndex(records, None)).view(scope).between(start, end):
            hits.append(
                PeriodHit(
                    "records", record_date(head), head.record_id, None, head.content, head.trust
                )
            )
    if stores is not None and kinds & {"turns", "chunks"}:
        from cairn.history.listing import listed_between  # it reads this module's kinds

        hits += listed_between(stores, scope, kinds, start, end)
        kinds -= {"turns", "chunks"}  # listed
    sessions = session_ids(events, scope) if kinds & {"turns", "chunks"} else []
    if "turns" in kinds:
        for session_id in sessions:
            for event in session_events(events, scope, session_id):
                if start <= event.event_timestamp <= end and (hit := _turn_hit(event)):
                    hits.append(hit)
    if "chunks" in kinds and chunks is not None:
        for session_id in sorted(set(sessions) | set(chunks.chunk_sessions(scope))):
            for chunk in chunks.list_chunks(scope, session_id):
                if chunk.period_start <= end and chunk.period_end >= start:
                    hits.append(_chunk_hit(chunk))
    hits.sort(key=lambda h: (h.at, h.kind, -h.level, h.ref))
    return tuple(hits[:limit])


def about_time(
    records: RecordStore,
    events: EventStore,
    chunks: ChunkStore | None,
    scope: Scope,
    question: str,
    *,
    now: datetime | None = None,
    kinds: frozenset[Kind] = ALL_KINDS,
    limit: int = 100,
    heads: HeadIndex | None = None,
    stores: Stores | None = None,
) -> tuple[PeriodHit, ...]:
    """What the scope holds for every period ``question`` names, oldest first, at most
    ``limit``; none when it names no period. Relative periods are resolved against ``now``,
    by default the time of the scope's latest turn, so "last March" is the conversation's."""
    when = now or _latest_turn(events, scope, stores, kinds)
    if when is None:
        return ()
    found: dict[tuple[str, str], PeriodHit] = {}
    for period in query_periods(question, when):
        end = period.end - timedelta(microseconds=1)  # periods are half-open
        for hit in by_period(
            records,
            events,
            chunks,
            scope,
            period.start,
            end,
            kinds=kinds,
            limit=MAX_RESULTS,
            heads=heads,
            stores=stores,
        ):
            found.setdefault((hit.kind, hit.ref), hit)
    hits = sorted(found.values(), key=lambda h: (h.at, h.kind, -h.level, h.ref))
    return tuple(hits[:limit])


def _latest_turn(
    events: EventStore, scope: Scope, stores: Stores | None, kinds: frozenset[Kind]
) -> datetime | None:
    if stores is not None:
        from cairn.history.listing import latest_listed_turn

        return latest_listed_turn(stores, scope, kinds)
    latest: datetime | None = None
    for session_id in session_ids(events, scope):
        for event in session_events(events, scope, session_id):
            if latest is None or event.event_timestamp > latest:
                latest = event.event_timestamp
    return latest


@dataclass(frozen=True, slots=True)
class Neighbor:
    """One typed edge of the record: its kind, its direction, the live record it reaches
    (``None`` when the target is not a live record of the scope), whether it is a record's own
    edge or a link beside the records, and its trust (see the module)."""

    kind: EdgeKind
    direction: Literal["out", "in"]
    target: str
    record: RecordVersion | None
    trust: Trust = Trust.UNTRUSTED
    via: Literal["edge", "link"] = "edge"


def neighbors(
    records: RecordStore,
    scope: Scope,
    record_id: str,
    *,
    kinds: frozenset[EdgeKind] = LINK_KINDS,
    heads: HeadIndex | None = None,
    links: LinkStore | None = None,
) -> tuple[Neighbor, ...]:
    """The record's typed links of ``kinds`` (a subset of ``LINK_KINDS``): its own edges in
    order, then the live records whose edges name it, by record id, then the links from or to
    it in ``links``, by (from, kind, to). ``RecordNotFoundError`` outside the scope."""
    unknown = kinds - LINK_KINDS
    if unknown:
        raise InvalidInputError(
            f"edge kind {sorted(k.value for k in unknown)[0]!r} is not a link recall walks; use "
            f"one of {', '.join(sorted(k.value for k in LINK_KINDS))}"
        )
    head = records.get(scope, record_id)
    view = (heads or HeadIndex(records, None)).view(scope)
    found: list[Neighbor] = []
    for edge in head.edges:
        if edge.kind in kinds:
            target = view.by_id.get(edge.target)
            found.append(Neighbor(edge.kind, "out", edge.target, target, head.trust))
    for other, kind in view.inbound.get(record_id, ()):
        if kind in kinds and other.record_id != record_id:
            found.append(Neighbor(kind, "in", other.record_id, other, other.trust))
    for link in links.links_of(scope, record_id) if links is not None else ():
        if link.kind in kinds:
            out = link.from_id == record_id
            other_id = link.to_id if out else link.from_id
            found.append(
                Neighbor(
                    link.kind,
                    "out" if out else "in",
                    other_id,
                    view.by_id.get(other_id),
                    link.trust,
                    "link",
                )
            )
    return tuple(found)


def children(
    events: EventStore, chunks: ChunkStore, scope: Scope, session_id: str, chunk_id: str
) -> tuple[Event, ...] | tuple[Chunk, ...]:
    """The chunk's children, in order: its events (level 1) or its chunks (above); a turn
    deleted since is absent. ``ChunkNotFoundError`` outside the scope and session."""
    chunk = chunks.get_chunk(scope, session_id, chunk_id)
    if chunk.level > 1:
        return tuple(chunks.get_chunk(scope, session_id, child) for child in chunk.children)
    wanted = set(chunk.children)
    found = {
        e.event_id: e for e in session_events(events, scope, session_id) if e.event_id in wanted
    }
    return tuple(found[child] for child in chunk.children if child in found)


def enclosing(
    chunks: ChunkStore, scope: Scope, session_id: str, event_id: str
) -> tuple[Chunk, ...]:
    """The chunks that cover the turn ``event_id``, level 1 first; none if not rolled up yet."""
    stored = chunks.list_chunks(scope, session_id)
    first = next((c for c in stored if c.level == 1 and event_id in c.children), None)
    if first is None:
        return ()
    return tuple(c for c in stored if c.from_seq <= first.from_seq and c.to_seq >= first.to_seq)


def _check_period(start: datetime, end: datetime, kinds: frozenset[Kind], limit: int) -> None:
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidInputError("a period's start and end must be timezone-aware (UTC)")
    if end < start:
        raise InvalidInputError("a period's end precedes its start; swap them")
    if not kinds or not kinds <= ALL_KINDS:
        raise InvalidInputError("kinds must name one or more of records, turns, chunks")
    if not 1 <= limit <= MAX_RESULTS:
        raise InvalidInputError(f"limit must be between 1 and {MAX_RESULTS}, got {limit}")


def _turn_hit(event: Event) -> PeriodHit | None:
    messages = [p for _, p in messages_of(event)]
    if event.branch is not None or not messages:
        return None
    text = "\n".join(f"{m.role.value}: {m.text}" for m in messages)
    trust = derive_trust(tuple(role_source(m.role, event.session_id) for m in messages))
    return PeriodHit("turns", event.event_timestamp, event.event_id, event.session_id, text, trust)


def _chunk_hit(chunk: Chunk) -> PeriodHit:
    return PeriodHit(
        "chunks",
        chunk.period_start,
        chunk.chunk_id,
        chunk.session_id,
        chunk.summary,
        chunk.trust,
        chunk.level,
    )
