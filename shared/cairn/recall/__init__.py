"""Recall: query -> ranked, deduplicated, budget-clamped selection -> a rendered block.

``recall`` runs DESIGN §5 steps 1-7 over the ports; ``replay`` rebuilds a journalled block from
the exact versions it pinned, without searching. Each step is a pure function in its own module:
``candidates`` (1), ``relevance`` (2, floor and fusion), ``context`` (2b, neighbouring records of
a hit), ``signals`` (2c, people and periods the query names, read by ``temporal``), ``ranking``
(3), ``dedup`` (4), ``budget`` (5), ``render`` (6), ``journal`` (7); ``ordering`` chains 2-3.
"""

from cairn.recall.pipeline import RecallCounts, RecalledEntry, Recollection, recall
from cairn.recall.query import DEFAULT_POLICY, RecallPolicy, RecallQuery
from cairn.recall.replay import Replay, replay

__all__ = [
    "DEFAULT_POLICY",
    "RecallCounts",
    "RecallPolicy",
    "RecallQuery",
    "RecalledEntry",
    "Recollection",
    "Replay",
    "recall",
    "replay",
]
