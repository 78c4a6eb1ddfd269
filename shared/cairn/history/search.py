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

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cairn.errors import InvalidInputError
from cairn.history.axes import ALL_KINDS, Kind
from cairn.history.hits import (
    Hit,
    Piece,
    hits_block,
    piece_hit,
    record_hit,
)
from cairn.history.journalled import journal_hits
from cairn.history.listing import history_pieces, listed
from cairn.history.turns import session_events
from cairn.models import Scope, Trust
from cairn.paging import session_ids
from cairn.ports import Clock, Embedder, Stores
from cairn.recall.dedup import deduplicate, untrusted_limit
from cairn.recall.index import index_of
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import DEFAULT_POLICY, RecallPolicy, RecallQuery
from cairn.recall.ranking import ranking_score
from cairn.recall.signals import in_periods
from cairn.recall.temporal import Period, query_periods

__all__ = ["BothChannels", "Hit", "recall_both", "render_hits"]

# What a passage ranks with for a confidence: the middle of the scale, so a distilled record
# of equal relevance and high confidence ranks ahead of the words it was distilled from.
PASSAGE_CONFIDENCE = 0.5
_SHARED = PassageIndex()


@dataclass(frozen=True, slots=True)
class BothChannels:
    """The hits, best first; the time periods were resolved against; the periods named; the
    block shown (``render_hits``) and its journal entry's id (``None`` when not journalled)."""

    hits: tuple[Hit, ...]
    now: datetime
    periods: tuple[Period, ...]
    searched: dict[str, int]  # candidates per kind (counts only, never content)
    block: str = ""
    journal_id: str | None = None


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
    journal: bool = True,
) -> BothChannels:
    """At most ``query.top_k`` hits of ``kinds`` most relevant to ``query``, best first.

    Relative periods resolve against ``now``, by default the scope's latest turn (the clock
    when it has none). Namespace, strategy and as-of filters select records only, so they are
    refused with turns or chunks. With ``journal`` the block is journalled as ``recall``
    journals one (the query, the knobs, each line's id, version or text digest, the chain), so
    ``cairn replay`` rebuilds it byte for byte without searching
    (``cairn.history.journalled``).
    """
    _check(query, kinds)
    pieces, version = listed(stores, scope, kinds, history_pieces)
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
        scope,
        passages,
        query.text,
        embedder=embedder,
        policy=policy,
        periods=periods,
        version=version,
    ):
        piece = pieces[scored.position]
        score = ranking_score(scored.relevance, PASSAGE_CONFIDENCE, piece.passage.end, when, policy)
        hits.append(piece_hit(piece, score, scored.relevance, scored.in_period))
    hits.sort(key=lambda h: (-h.score, -h.relevance, h.kind, h.ref))
    shown = _select(hits, policy, query.top_k)
    block = hits_block(shown)
    journal_id = None
    if journal:
        journal_id = journal_hits(
            scope,
            query,
            kinds,
            shown,
            block,
            stores=stores,
            embedder=embedder,
            policy=policy,
            now=clock.now(),
        )
    return BothChannels(shown, when, periods, searched, block, journal_id)


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
        in_period = bool(periods) and in_periods(version, periods, lag)
        hits.append(
            record_hit(version, ranked.score, ranked.relevance, in_period, text=version.content)
        )
    return hits, found.candidates


def _conversation_time(
    stores: Stores, scope: Scope, text: str, pieces: Sequence[Piece], wall: datetime
) -> datetime | None:
    """The scope's latest turn: from the turns listed, or (a records-only recall of a query
    that names a period) read for it; ``None`` when there is none or it is not needed."""
    turns = [p.passage.end for p in pieces if p.kind == "turns"]
    if turns:
        return max(turns)
    if not query_periods(text, wall):
        return None
    latest: datetime | None = None
    for session_id in session_ids(stores.events, scope):
        for event in session_events(stores.events, scope, session_id):
            if latest is None or event.event_timestamp > latest:
                latest = event.event_timestamp
    return latest


def render_hits(found: BothChannels) -> str:
    """The block of ``found``'s hits (``cairn.history.hits.hits_block``)."""
    return hits_block(found.hits)
