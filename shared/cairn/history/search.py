"""Semantic recall over both channels at once: records, turns and chunks, in one ranking.

``recall_both(scope, query, kinds=...)`` answers "what do we know, and what was said, about
this?" through one surface:

- records go through the recall index (``cairn.recall.index.index_of``) and its dedup, exactly
  as ``cairn.recall.recall`` chooses them (the same floor, signals, ranking, untrusted share);
- turns and chunks go through the passage index (``cairn.recall.index.passages``): the same
  floor and fusion over their words and vectors, then ranked by the same score a record gets,
  with ``PASSAGE_CONFIDENCE`` for a confidence (a passage is what was said, not a belief
  someone confirmed) and its end for a last confirmation.

The merged ranking keeps recall's crowding rule (untrusted hits take at most
``max_untrusted_share`` of ``top_k`` while any trusted hit exists) and shows words said again
(the same kind, the same text) once.

Time is the conversation's: "last March" and "two weeks ago" are resolved against the scope's
latest turn (not the wall clock, which may be years on), and a record dated in that period or a
turn or chunk overlapping it has its relevance multiplied by ``1 + policy.temporal_weight``.
Turns and chunks carry the trust of who spoke (``cairn.history.turns``); a deleted turn or an
erased session is absent from the next answer, because each call lists what the stores hold.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cairn.errors import InvalidInputError
from cairn.history.axes import ALL_KINDS, Kind
from cairn.history.turns import role_source, session_events
from cairn.models import RecordVersion, Role, Scope, Trust, derive_trust
from cairn.ports import MAX_PAGE_SIZE, Clock, Embedder, Stores
from cairn.recall.dedup import deduplicate, untrusted_limit
from cairn.recall.index import index_of
from cairn.recall.index.passages import Passage, PassageIndex
from cairn.recall.query import DEFAULT_POLICY, RecallPolicy, RecallQuery
from cairn.recall.ranking import ranking_score
from cairn.recall.render import CAVEAT, one_line, quote
from cairn.recall.signals import in_periods
from cairn.recall.temporal import Period, query_periods
from cairn.rollout.index import messages_of
from cairn.visible_text import neutralised

# What a passage ranks with for a confidence: the middle of the scale, so a distilled record
# of equal relevance and high confidence ranks ahead of the words it was distilled from.
PASSAGE_CONFIDENCE = 0.5
_SHARED = PassageIndex()
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
class BothChannels:
    """The hits, best first; the time periods were resolved against; the periods named."""

    hits: tuple[Hit, ...]
    now: datetime
    periods: tuple[Period, ...]
    searched: dict[str, int]  # candidates per kind (counts only, never content)


@dataclass(frozen=True, slots=True)
class _Piece:
    kind: Kind
    session_id: str
    trust: Trust
    level: int
    passage: Passage


def recall_both(
    scope: Scope,
    query: RecallQuery,
    *,
    stores: Stores,
    embedder: Embedder | None,
    clock: Clock,
    kinds: frozenset[Kind] = ALL_KINDS,
    policy: RecallPolicy = DEFAULT_POLICY,
    now: datetime | None = None,
    index: PassageIndex | None = None,
) -> BothChannels:
    """At most ``query.top_k`` hits of ``kinds`` most relevant to ``query``, best first.

    Relative periods resolve against ``now``, by default the scope's latest turn (the clock
    when it has none). Namespace, strategy and as-of filters select records only, so they are
    refused with turns or chunks; nothing is journalled.
    """
    _check(query, kinds)
    pieces = _pieces(stores, scope, kinds)
    when = now or _conversation_time(stores, scope, query.text, pieces, clock.now()) or clock.now()
    periods = tuple(query_periods(query.text, when)) if policy.temporal_weight > 0 else ()
    hits, candidates = (
        _records(scope, query, stores, embedder, policy, when, periods)
        if "records" in kinds
        else ([], 0)
    )
    searched = {"records": candidates}
    for kind in ("turns", "chunks"):
        searched[kind] = sum(1 for p in pieces if p.kind == kind)
    passages = [p.passage for p in pieces]
    for scored in (index or _SHARED).search(
        scope, passages, query.text, embedder=embedder, policy=policy, periods=periods
    ):
        piece = pieces[scored.position]
        score = ranking_score(scored.relevance, PASSAGE_CONFIDENCE, piece.passage.end, when, policy)
        hits.append(
            Hit(
                piece.kind,
                piece.passage.ref,
                piece.session_id,
                piece.passage.start,
                piece.passage.text,
                piece.trust,
                score,
                scored.relevance,
                scored.in_period,
                piece.level,
            )
        )
    hits.sort(key=lambda h: (-h.score, -h.relevance, h.kind, h.ref))
    return BothChannels(_select(hits, policy, query.top_k), when, periods, searched)


def _select(hits: Sequence[Hit], policy: RecallPolicy, top_k: int) -> tuple[Hit, ...]:
    """The first ``top_k`` hits, a text said again (same kind, same words) shown once, and
    untrusted hits within recall's share (``max_untrusted_share``) while a trusted one exists."""
    trusted = any(h.trust is Trust.TRUSTED for h in hits)
    cap = untrusted_limit(policy, top_k) if trusted else top_k
    kept: list[Hit] = []
    seen: set[tuple[str, str]] = set()
    untrusted = 0
    for hit in hits:
        if len(kept) >= top_k:
            break
        if (hit.kind, hit.text) in seen:
            continue
        if hit.trust is not Trust.TRUSTED:
            if untrusted >= cap:
                continue
            untrusted += 1
        seen.add((hit.kind, hit.text))
        kept.append(hit)
    return tuple(kept)


def _check(query: RecallQuery, kinds: frozenset[Kind]) -> None:
    if not kinds or not kinds <= ALL_KINDS:
        raise InvalidInputError("kinds must name one or more of records, turns, chunks")
    if kinds != {"records"} and (
        query.namespace_prefix is not None or query.strategy is not None or query.as_of
    ):
        raise InvalidInputError(
            "namespace, strategy and as-of filters select records only; recall turns and "
            "chunks without them, or ask for kinds={'records'}"
        )


def _records(
    scope: Scope,
    query: RecallQuery,
    stores: Stores,
    embedder: Embedder | None,
    policy: RecallPolicy,
    when: datetime,
    periods: Sequence[Period],
) -> tuple[list[Hit], int]:
    """Recall's records for the query, as hits, and how many live heads it searched."""
    found = index_of(stores).search(scope, query, embedder=embedder, policy=policy, now=when)
    kept = deduplicate(found.ranked, policy, limit=query.top_k, any_trusted=found.any_trusted)
    lag = timedelta(days=policy.temporal_lag_days)
    hits: list[Hit] = []
    for ranked in kept.kept:
        version = ranked.candidate.version
        hits.append(
            Hit(
                "records",
                version.record_id,
                None,
                version.valid_from or version.first_seen_at,
                version.content,
                version.trust,
                ranked.score,
                ranked.relevance,
                bool(periods) and in_periods(version, periods, lag),
                record=version,
            )
        )
    return hits, found.candidates


def _pieces(stores: Stores, scope: Scope, kinds: frozenset[Kind]) -> list[_Piece]:
    pieces: list[_Piece] = []
    sessions = _sessions(stores, scope) if kinds & {"turns", "chunks"} else []
    if "turns" in kinds:
        for session_id in sessions:
            for event in session_events(stores.events, scope, session_id):
                messages = [m for _, m in messages_of(event)]
                if event.branch is not None or not messages:
                    continue
                text = "\n".join(f"{m.role.value}: {m.text}" for m in messages)
                trust = _trust_of(frozenset(m.role for m in messages))
                at = event.event_timestamp
                passage = Passage(event.event_id, at, at, text)
                pieces.append(_Piece("turns", session_id, trust, 0, passage))
    if "chunks" in kinds and stores.chunks is not None:
        for session_id in sorted(set(sessions) | set(stores.chunks.chunk_sessions(scope))):
            for chunk in stores.chunks.list_chunks(scope, session_id):
                passage = Passage(
                    chunk.chunk_id, chunk.period_start, chunk.period_end, chunk.summary
                )
                pieces.append(_Piece("chunks", session_id, chunk.trust, chunk.level, passage))
    return pieces


@functools.cache
def _trust_of(roles: frozenset[Role]) -> Trust:
    """A turn's trust from who spoke in it (it depends on the kinds of speaker alone)."""
    return derive_trust(tuple(role_source(role, "session") for role in sorted(roles)))


def _sessions(stores: Stores, scope: Scope) -> list[str]:
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = stores.events.list_sessions(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        found += [s.session_id for s in page.items]
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _conversation_time(
    stores: Stores, scope: Scope, text: str, pieces: Sequence[_Piece], wall: datetime
) -> datetime | None:
    """The scope's latest turn: from the turns listed, or (a records-only recall of a query
    that names a period) read for it; ``None`` when there is none or it is not needed."""
    turns = [p.passage.end for p in pieces if p.kind == "turns"]
    if turns:
        return max(turns)
    if not query_periods(text, wall):
        return None
    latest: datetime | None = None
    for session_id in _sessions(stores, scope):
        for event in session_events(stores.events, scope, session_id):
            if latest is None or event.event_timestamp > latest:
                latest = event.event_timestamp
    return latest


def render_hits(found: BothChannels) -> str:
    """The hits as a block: a fixed heading and recall's caveat, then one line a hit with its
    kind, date, trust and text (untrusted text quoted; invisible characters as markers)."""
    lines = [HEADING, CAVEAT]
    for hit in found.hits:
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
    if not found.hits:
        lines.append(EMPTY_LINE)
    return "\n".join(lines)
