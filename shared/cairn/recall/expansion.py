"""Step 2b, context expansion: a strong hit lends relevance to its neighbours in a thread.

A thread is what a record says it belongs to: each source's ``session_id``, and each
``part_of`` / ``discussed_in`` edge target. Within a thread, records are laid out by
``first_seen_at`` (then record id). A neighbour of a hit is a record of the same thread at most
``context_span`` places before or after it, with a different ``first_seen_at`` no more than
``context_window_seconds`` away. Records stamped at the same instant (a batch of facts
extracted together) are never each other's neighbours, so only records told in sequence, like
the turns of a conversation, lend each other context. For the same reason a record that
extraction distilled (a source cites a rollout) belongs to no thread: it is a standalone fact,
not a turn, and the fact filed after it in the same session ("the office is in Lisbon" after
"meetings before 11am") is no part of its answer. Context expansion was measured on records
that are turns (LoCoMo); on distilled facts it only crowded the block.

The ``context_hits`` most relevant candidates (``list_context_hits`` for a question that asks
for several things, ``cairn.recall.question``) each lend a neighbour at distance ``d``
``relevance x context_weight ** d``; a candidate keeps the best of its own relevance and what
it is lent. Because ``context_weight < 1``, a lent relevance is always below the lender's. A
neighbour the floor dropped is admitted back only if what it is lent reaches
``relevance_floor`` itself: it is shown as the context of a hit that passed clearly, never on
its own and never on the strength of a hit that barely passed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from cairn.models import EdgeKind, RecordVersion
from cairn.recall.candidates import Candidate, CandidatePool
from cairn.recall.query import RecallPolicy
from cairn.recall.question import context_lenders
from cairn.recall.relevance import Relevant

_THREAD_EDGES = frozenset({EdgeKind.PART_OF, EdgeKind.DISCUSSED_IN})
_SESSION = "session"
_Position = tuple[datetime, str]
# A thread is (kind, name): ("session", session id) or (edge kind, edge target).
Thread = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Expanded:
    """The relevant candidates after expansion, and how many neighbours joined them."""

    relevant: tuple[Relevant, ...]
    admitted: int


def threads(version: RecordVersion) -> frozenset[Thread]:
    """The threads a record belongs to: its source sessions and its thread edge targets; none
    for a record distilled by extraction."""
    if _distilled(version):
        return frozenset()
    sessions = {(_SESSION, s.session_id) for s in version.sources if s.session_id}
    edges = {(e.kind.value, e.target) for e in version.edges if e.kind in _THREAD_EDGES}
    return frozenset(sessions | edges)


def _distilled(version: RecordVersion) -> bool:
    return any(source.rollout_id for source in version.sources)


def _member_of(version: RecordVersion, wanted: frozenset[Thread]) -> list[Thread]:
    """The threads of ``wanted`` the record belongs to; cheap when it belongs to none (this
    runs on every candidate of the pool)."""
    found: list[Thread] = []
    if _distilled(version):
        return found
    for source in version.sources:
        if source.session_id and (_SESSION, source.session_id) in wanted:
            found.append((_SESSION, source.session_id))
    for edge in version.edges:
        if edge.kind in _THREAD_EDGES and (edge.kind.value, edge.target) in wanted:
            found.append((edge.kind.value, edge.target))
    return found


def _position(version: RecordVersion) -> _Position:
    return (version.first_seen_at, version.record_id)


@dataclass(frozen=True, slots=True)
class _Timeline:
    """One thread's candidates in ``_position`` order."""

    positions: tuple[_Position, ...]
    candidates: tuple[Candidate, ...]

    def neighbours(
        self, hit: RecordVersion, span: int, window: float
    ) -> list[tuple[int, Candidate]]:
        """``(distance, candidate)`` for each neighbour of ``hit`` on either side."""
        at = bisect.bisect_left(self.positions, _position(hit))
        found: list[tuple[int, Candidate]] = []
        for step in (-1, 1):
            index, distance = at + step, 0
            while 0 <= index < len(self.candidates) and distance < span:
                when = self.positions[index][0]
                gap = abs((when - hit.first_seen_at).total_seconds())
                if gap > window:
                    break
                if gap > 0:
                    distance += 1
                    found.append((distance, self.candidates[index]))
                index += step
        return found


def _timelines(pool: CandidatePool, wanted: frozenset[Thread]) -> dict[Thread, _Timeline]:
    members: dict[Thread, list[Candidate]] = {thread: [] for thread in wanted}
    for candidate in pool.candidates:
        for thread in _member_of(candidate.version, wanted):
            members[thread].append(candidate)
    timelines: dict[Thread, _Timeline] = {}
    for thread, found in members.items():
        found.sort(key=lambda c: _position(c.version))
        positions = tuple(_position(c.version) for c in found)
        timelines[thread] = _Timeline(positions=positions, candidates=tuple(found))
    return timelines


def _lent(hits: Sequence[Relevant], pool: CandidatePool, policy: RecallPolicy) -> dict[str, float]:
    """The best relevance each neighbour is lent, by record id."""
    wanted: frozenset[Thread] = frozenset().union(*(threads(h.candidate.version) for h in hits))
    if not wanted:
        return {}
    timelines = _timelines(pool, wanted)
    lent: dict[str, float] = {}
    for hit in hits:
        version = hit.candidate.version
        for thread in threads(version):
            timeline = timelines[thread]
            span, window = policy.context_span, policy.context_window_seconds
            for distance, neighbour in timeline.neighbours(version, span, window):
                share = hit.relevance * policy.context_weight**distance
                rid = neighbour.version.record_id
                lent[rid] = max(lent.get(rid, 0.0), share)
    return lent


def expand(
    relevant: Sequence[Relevant], pool: CandidatePool, policy: RecallPolicy, query_text: str = ""
) -> Expanded:
    """``relevant`` with neighbours of its best members lent relevance (``context_hits`` of
    them, ``list_context_hits`` when ``query_text`` asks for several things: recall.question;
    admitted, if the floor had dropped them, when the loan reaches the floor); unchanged when
    ``context_weight`` is 0."""
    if policy.context_weight == 0 or not relevant:
        return Expanded(relevant=tuple(relevant), admitted=0)
    hits = sorted(relevant, key=lambda r: (-r.relevance, r.candidate.version.record_id))
    lent = _lent(hits[: context_lenders(policy, query_text)], pool, policy)
    if not lent:
        return Expanded(relevant=tuple(relevant), admitted=0)
    present = {r.candidate.version.record_id for r in relevant}
    result = [
        Relevant(candidate=r.candidate, relevance=lent[rid])
        if (rid := r.candidate.version.record_id) in lent and lent[rid] > r.relevance
        else r
        for r in relevant
    ]
    floor = policy.relevance_floor
    admitted = [
        Relevant(candidate=c, relevance=lent[rid])
        for c in pool.candidates
        if (rid := c.version.record_id) in lent and rid not in present and lent[rid] >= floor
    ]
    return Expanded(relevant=(*result, *admitted), admitted=len(admitted))
