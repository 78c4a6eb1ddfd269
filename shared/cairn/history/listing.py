"""What recall over history lists, kept while the store says nothing changed.

Listing a scope's turns and chunks through the ports is most of a warm ``recall_both`` (every
session's events, every chunk). A backend with ``Stores.history_generations`` moves a scope's
generation with every event and chunk written or deleted, so the list read at a generation is
the list at that generation: ``listed`` reads the generation first, then returns the list it
holds for (scope, kinds) at that generation, or lists anew and keeps it. A write racing the
listing only makes the kept list newer than its generation; the next call sees the generation
moved and lists again. Without generations every call lists.

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

from cairn.history.axes import Kind
from cairn.history.hits import Piece
from cairn.models import Scope
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
