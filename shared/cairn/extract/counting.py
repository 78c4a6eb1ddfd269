"""What one extraction counts: candidates capped to one atomic apply, and changes by kind."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    Change,
    Create,
    FoldIn,
    NewRecord,
    Revise,
    Supersede,
)
from cairn.extract.strategies import StrategyExtraction


def capped(extracted: Sequence[StrategyExtraction]) -> tuple[list[NewRecord], int]:
    """The candidates of strategies sharing a namespace, fairly shared so that their changes fit
    one atomic apply (one change per candidate); how many were dropped to fit."""
    share = max(1, MAX_CHANGES_PER_APPLY // max(1, len(extracted)))
    found = [list(e.candidates or ())[:share] for e in extracted]
    kept = [candidate for group in found for candidate in group][:MAX_CHANGES_PER_APPLY]
    return kept, sum(len(e.candidates or ()) for e in extracted) - len(kept)


def change_counts(changes: Sequence[Change]) -> dict[str, int]:
    kinds = [type(change) for change in changes]
    return {
        "created": kinds.count(Create),
        "merged": kinds.count(Revise),
        "superseded": kinds.count(Supersede),
        "folded_in": kinds.count(FoldIn),
    }
