"""The erasure fence: erase and retract win over every write planned before them (issue 17).

Each scope keeps a count of committed erasures (``erase``, ``erase_scope`` and any ``apply``
that retracts), which never decreases, not even when the scope is erased. A planner (extraction,
consolidation) reads the count before it reads what its plan is built from, and passes it to
``RecordStore.apply(..., erasures=...)``; each backend compares it with the stored count inside
the apply's own transaction, so a plan read before an erasure can never write what was erased
back, whichever process made either write.

The record directory's placements (where the AgentCore API finds a record by id) obey the same
fence: ``RecordDirectory.place(..., erasures=...)`` places nothing after an erasure of the
scope, and ``place_fenced`` places what a planner wrote, or, after losing that race, exactly
the records that still exist, so a DeleteMemory landing between a plan's apply and its
placement leaves no placement behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cairn.changes import Change, Retract
from cairn.errors import ErasedMeanwhileError, InvalidInputError, RecordNotFoundError
from cairn.models import RecordVersion, Scope, Status
from cairn.ports import RecordPlacement, Stores

# Rounds of "placement lost to an erasure: see what still exists, place that": each round
# follows a committed erasure, so more than a few means erasures keep landing; the caller's
# retry (the queue's redelivery) takes it from there.
PLACEMENT_ROUNDS = 3


def erases(changes: Sequence[Change]) -> bool:
    """Whether applying ``changes`` counts as an erasure (it retracts a record)."""
    return any(isinstance(change, Retract) for change in changes)


def check_fence(expected: int | None, found: int) -> None:
    """Raise ``ErasedMeanwhileError`` if an erasure committed since the planner read
    ``expected`` (``None``: the caller planned nothing from earlier reads)."""
    if expected is not None and expected != found:
        raise ErasedMeanwhileError(expected, found)


def placement_scope(memory_id: str, actor_ids: Iterable[str]) -> Scope:
    """The one scope fenced placements lie in; ``InvalidInputError`` for several actors."""
    actors = set(actor_ids)
    if len(actors) != 1:
        raise InvalidInputError(
            f"placements fenced by one erasure count must all be of one actor, got {len(actors)}"
        )
    return Scope(memory_id=memory_id, actor_id=actors.pop())


def _still_there(stores: Stores, scope: Scope, record_id: str) -> bool:
    try:
        return stores.records.get(scope, record_id).status is not Status.ERASED
    except RecordNotFoundError:
        return False


def place_fenced(
    stores: Stores, scope: Scope, versions: Sequence[RecordVersion], erasures: int
) -> None:
    """Place ``versions``' records in the directory unless an erasure of ``scope`` committed
    since ``erasures`` (the count the plan read first); after such an erasure, place exactly
    the records that survived it, fenced by a fresh count. ``ErasedMeanwhileError`` if
    erasures keep landing (retryable: placing again is harmless)."""
    directory = stores.directory
    if directory is None:
        return
    for _ in range(PLACEMENT_ROUNDS):
        placements = {
            v.record_id: RecordPlacement(
                record_id=v.record_id, actor_id=v.actor_id, namespace=v.namespace
            )
            for v in versions
        }
        if not placements:
            return
        try:
            directory.place(scope.memory_id, list(placements.values()), erasures=erasures)
            return
        except ErasedMeanwhileError:
            erasures = stores.records.erasures(scope)  # before looking: a later erasure wins
            versions = [v for v in versions if _still_there(stores, scope, v.record_id)]
    raise ErasedMeanwhileError(erasures, stores.records.erasures(scope))
