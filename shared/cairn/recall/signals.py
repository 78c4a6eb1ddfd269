"""Step 2c, query signals: who and when the query names, as bounded boosts on relevance.

Two signals, each off at weight 0 and read only from what the record already carries:

- entity: the query names one of the record's ``entities`` (every keyword token of the entity
  appears among the query's keyword tokens, so "Caroline's" names "Caroline" and "New York"
  needs both words). Relevance is multiplied by ``1 + policy.entity_weight``.
- time: the query names a period (``cairn.recall.temporal``) and the record's date falls in
  it, or up to ``policy.temporal_lag_days`` after it (an event is often told days after it
  happened). The date is ``valid_from`` when the writer knew it, else ``first_seen_at`` (when
  it was first said). Relevance is multiplied by ``1 + policy.temporal_weight``.

Boosts multiply and are capped at 1, so a relevance of 0 stays 0: a signal reorders what is
already relevant and can never rescue an unrelated memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from cairn.models import RecordVersion
from cairn.recall.keywords import tokenize
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import Relevant
from cairn.recall.temporal import Period, query_periods


def record_date(version: RecordVersion) -> datetime:
    """When a record's fact happened as far as the store knows: ``valid_from``, else
    ``first_seen_at``."""
    return version.valid_from or version.first_seen_at


def names_an_entity(version: RecordVersion, query_tokens: frozenset[str]) -> bool:
    """Whether every keyword token of one of the record's entities is in ``query_tokens``."""
    for entity in version.entities:
        tokens = tokenize(entity)
        if tokens and query_tokens.issuperset(tokens):
            return True
    return False


def in_periods(version: RecordVersion, periods: Sequence[Period], lag: timedelta) -> bool:
    """Whether the record's date falls in one of ``periods`` (or up to ``lag`` after it)."""
    when = record_date(version)
    return any(period.holds(when, lag=lag) for period in periods)


def looked_for(
    query_text: str, now: datetime, policy: RecallPolicy
) -> tuple[frozenset[str], tuple[Period, ...]]:
    """What ``boost`` looks for in a record: the query's keyword tokens (when the entity weight
    is above 0) and the periods it names (when the temporal weight is); both empty, it changes
    nothing."""
    tokens = frozenset(tokenize(query_text)) if policy.entity_weight > 0 else frozenset()
    periods = query_periods(query_text, now) if policy.temporal_weight > 0 else ()
    return tokens, periods


def boost(
    relevant: Sequence[Relevant], query_text: str, now: datetime, policy: RecallPolicy
) -> tuple[Relevant, ...]:
    """``relevant`` with each relevance multiplied by the signals it carries, capped at 1;
    the same objects back when every weight is 0 or the query names no one and no time."""
    entity_weight = policy.entity_weight
    temporal_weight = policy.temporal_weight
    tokens, periods = looked_for(query_text, now, policy)
    if not tokens and not periods:
        return tuple(relevant)
    lag = timedelta(days=policy.temporal_lag_days)
    boosted: list[Relevant] = []
    for item in relevant:
        candidate = item.candidate
        factor = 1.0
        if tokens and candidate.could_name(tokens) and names_an_entity(candidate.version, tokens):
            factor *= 1.0 + entity_weight
        if periods and in_periods(candidate.version, periods, lag):
            factor *= 1.0 + temporal_weight
        if factor == 1.0:
            boosted.append(item)
        else:
            relevance = min(1.0, item.relevance * factor)
            boosted.append(Relevant(candidate=item.candidate, relevance=relevance))
    return tuple(boosted)
