"""``index_of``: the one recall index per backend in this process (``EmbeddedRecallIndex``)."""

from __future__ import annotations

import threading
import weakref
from typing import cast

from cairn.ports import RecordGenerations, RecordStore, Stores
from cairn.recall.index.embedded import EmbeddedRecallIndex, RecallIndex, TransientRecallIndex
from cairn.recall.index.rows import bulk_reads

# One index per backend in this process, found through the backend's generations object and
# gone with it: the index holds the backend only through weak proxies, so this cache never
# keeps a closed backend (or its snapshots) alive.
_Shared = tuple["weakref.ReferenceType[RecordStore]", EmbeddedRecallIndex]
_SHARED: weakref.WeakKeyDictionary[RecordGenerations, _Shared] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def index_of(stores: Stores) -> RecallIndex:
    """The recall index for ``stores``: the process's embedded index of their backend when it
    keeps generations (``Stores.generations``), else one built afresh for each recall."""
    generations = stores.generations
    if generations is None:
        return TransientRecallIndex(stores.records)
    with _SHARED_LOCK:
        shared = _SHARED.get(generations)
        # A new record store object for the same backend (a second ``stores()``) starts a new
        # index: the old one's proxy may be about to die with the object it proxies.
        if shared is None or shared[0]() is not stores.records:
            index = EmbeddedRecallIndex(
                cast(RecordStore, weakref.proxy(stores.records)),
                cast(RecordGenerations, weakref.proxy(generations)),
                bulk=bulk_reads(stores.records),
                objects=stores.index_objects,
                quarantine=stores.quarantine,
                snapshots=stores.index_snapshots,
                # Held as it is: a feed holds the backend's connection, not the backend, so
                # the entry still goes with the backend's generations object.
                changes=stores.changes,
            )
            shared = (weakref.ref(stores.records), index)
            _SHARED[generations] = shared
        return shared[1]
