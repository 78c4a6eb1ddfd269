"""What recall over history lists, kept while the store says nothing changed.

Listing a scope's turns and chunks through the ports is most of a warm ``recall_both`` (every
session's events, every chunk). A backend with ``Stores.history_generations`` moves a scope's
generation with every event and chunk written or deleted, so the list read at a generation is
the list at that generation: ``listed`` reads the generation first, then returns the list it
holds for (scope, kinds) at that generation, or lists anew and keeps it. A write racing the
listing only makes the kept list newer than its generation; the next call sees the generation
moved and lists again. Without generations every call lists.

``by_period`` and ``about_time`` (``cairn.history.axes``) given the stores read the same lists
(``listed_between``, ``latest_listed_turn``).

The version handed back (``None`` without generations) names the list for
``PassageIndex.search``: a token per generations object (so two backends whose counters agree
never share a list), the generation and the kinds.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime

from cairn.history.axes import Kind, PeriodHit
from cairn.history.hits import Piece, chunk_piece, turn_piece
from cairn.history.turns import session_events
from cairn.models import Scope
from cairn.paging import session_ids
from cairn.ports import Stores

# Lists kept per backend: the most recently recalled (scope, kinds), oldest dropped first.
MAX_LISTS = 64
Lister = Callable[[Stores, Scope, frozenset[Kind]], list[Piece]]


class _Held:
    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        self.lists: OrderedDict[tuple[Scope, frozenset[Kind]], tuple[Hashable, list[Piece]]] = (
            OrderedDict()
        )


_HELD: weakref.WeakKeyDictionary[object, _Held] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def listed(
    stores: Stores, scope: Scope, kinds: frozenset[Kind], lister: Lister
) -> tuple[list[Piece], Hashable | None]:
    """The pieces ``lister`` gives for (scope, kinds), and the version that names them."""
    generations = stores.history_generations
    if generations is None or not kinds & {"turns", "chunks"}:
        return lister(stores, scope, kinds), None
    generation = generations.generation(scope)
    with _LOCK:
        held = _HELD.get(generations)
        if held is None:
            held = _Held()
            _HELD[generations] = held
        kept = held.lists.get((scope, kinds))
    version = (held.token, generation, kinds)
    if kept is not None and kept[0] == generation:
        return kept[1], version
    pieces = lister(stores, scope, kinds)
    with _LOCK:
        held.lists[(scope, kinds)] = (generation, pieces)
        held.lists.move_to_end((scope, kinds))
        while len(held.lists) > MAX_LISTS:
            held.lists.popitem(last=False)
    return pieces, version


def history_pieces(stores: Stores, scope: Scope, kinds: frozenset[Kind]) -> list[Piece]:
    """Every turn and chunk of ``kinds`` the scope holds, listed through the ports."""
    pieces: list[Piece] = []
    sessions = session_ids(stores.events, scope) if kinds & {"turns", "chunks"} else []
    if "turns" in kinds:
        for session_id in sessions:
            for event in session_events(stores.events, scope, session_id):
                piece = turn_piece(event, session_id)
                if piece is not None:
                    pieces.append(piece)
    if "chunks" in kinds and stores.chunks is not None:
        for session_id in sorted(set(sessions) | set(stores.chunks.chunk_sessions(scope))):
            pieces += [
                chunk_piece(c, session_id) for c in stores.chunks.list_chunks(scope, session_id)
            ]
    return pieces


def listed_between(
    stores: Stores, scope: Scope, kinds: frozenset[Kind], start: datetime, end: datetime
) -> list[PeriodHit]:
    """The turns and chunks of ``kinds`` that fall from ``start`` to ``end`` (a chunk whose
    period overlaps it), from the kept list."""
    pieces, _ = listed(stores, scope, kinds, history_pieces)
    return [
        PeriodHit(
            p.kind, p.passage.start, p.passage.ref, p.session_id, p.passage.text, p.trust, p.level
        )
        for p in pieces
        if p.passage.start <= end and p.passage.end >= start
    ]


def latest_listed_turn(stores: Stores, scope: Scope, kinds: frozenset[Kind]) -> datetime | None:
    """The time of the scope's latest turn, from the kept list of ``kinds`` and its turns (the
    list ``listed_between`` reads when ``kinds`` names turns)."""
    pieces, _ = listed(stores, scope, kinds | {"turns"}, history_pieces)
    return max((p.passage.start for p in pieces if p.kind == "turns"), default=None)
