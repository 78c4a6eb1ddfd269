"""Steps 2-3 as one pure function: floor and fusion, context, query signals, then ranking.

``recall`` runs it on the pool it gathered; a benchmark can run it on a pool gathered once under
many policies and get exactly the order ``recall`` would (dedup and the budget come after).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cairn.recall.candidates import CandidatePool
from cairn.recall.expansion import expand
from cairn.recall.query import RecallPolicy
from cairn.recall.ranking import Ranked, rank
from cairn.recall.relevance import screen
from cairn.recall.signals import boost


@dataclass(frozen=True, slots=True)
class Ordered:
    """The ranking of a pool, best first, and what each step did to get it.

    ``below_floor``: candidates a floor left out and context did not bring back;
    ``contextual``: neighbours context expansion admitted although a floor had left them out;
    ``keyword_only``: no cosine passed the floor, so a fallback ranked (``relevance``);
    ``weak``: that fallback ran over an embedded pool and found rows, which the block labels.
    """

    ranked: tuple[Ranked, ...]
    below_floor: int
    keyword_only: bool
    contextual: int
    weak: bool = False


def order(pool: CandidatePool, query_text: str, policy: RecallPolicy, now: datetime) -> Ordered:
    """Rank ``pool`` for ``query_text`` under ``policy`` as of ``now``, best first."""
    screened = screen(pool, policy, query_text)
    expanded = expand(screened.relevant, pool, policy, query_text)
    boosted = boost(expanded.relevant, query_text, now, policy)
    return Ordered(
        ranked=tuple(rank(boosted, policy, now)),
        below_floor=screened.below_floor - expanded.admitted,
        keyword_only=screened.keyword_only,
        contextual=expanded.admitted,
        weak=screened.weak,
    )
