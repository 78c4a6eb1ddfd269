"""The erasure fence: erase and retract win over every write planned before them (issue 17).

Each scope keeps a count of committed erasures (``erase``, ``erase_scope`` and any ``apply``
that retracts), which never decreases, not even when the scope is erased. A planner (extraction,
consolidation) reads the count before it reads what its plan is built from, and passes it to
``RecordStore.apply(..., erasures=...)``; each backend compares it with the stored count inside
the apply's own transaction, so a plan read before an erasure can never write what was erased
back, whichever process made either write.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.changes import Change, Retract
from cairn.errors import ErasedMeanwhileError


def erases(changes: Sequence[Change]) -> bool:
    """Whether applying ``changes`` counts as an erasure (it retracts a record)."""
    return any(isinstance(change, Retract) for change in changes)


def check_fence(expected: int | None, found: int) -> None:
    """Raise ``ErasedMeanwhileError`` if an erasure committed since the planner read
    ``expected`` (``None``: the caller planned nothing from earlier reads)."""
    if expected is not None and expected != found:
        raise ErasedMeanwhileError(expected, found)
