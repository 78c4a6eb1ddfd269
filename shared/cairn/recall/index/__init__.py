"""The recall index: a derived, rebuildable index of a scope's live heads (DESIGN §5.1).

``snapshot`` holds one scope's heads as arrays, postings and a unit matrix; ``scoring`` scores
every row in arrays; ``shortlist`` ranks just the rows that can reach the block, exactly as the
scan (``cairn.recall.scan``) ranks them all; ``embedded`` keeps snapshots current in process,
``shared`` keeps one such index per backend.
``passages`` is the history channel's index beside it: turns and chunks, scored by the same
floor and fusion (``cairn.history.search`` merges the two).
"""

from cairn.recall.index.embedded import (
    EmbeddedRecallIndex,
    RecallIndex,
    TransientRecallIndex,
)
from cairn.recall.index.rows import read_rows
from cairn.recall.index.shared import index_of
from cairn.recall.index.shortlist import Search, search
from cairn.recall.index.snapshot import Snapshot, build_snapshot, row_of

__all__ = [
    "EmbeddedRecallIndex",
    "RecallIndex",
    "Search",
    "Snapshot",
    "TransientRecallIndex",
    "build_snapshot",
    "index_of",
    "read_rows",
    "row_of",
    "search",
]
