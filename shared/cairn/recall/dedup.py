"""Step 4, paraphrase dedup, before any budget is spent: a near-duplicate of a better-ranked
survivor is dropped, so a repeat can never take the place of a distinct memory.

Two candidates are duplicates when their content digests are equal (an exact repeat after
canonicalisation); or, when both have vectors, their cosine is at least ``dedup_cosine``; or,
when either lacks a vector, the Jaccard similarity of their token sets is at least
``dedup_jaccard``. Candidates are visited best first; each is kept only if it duplicates no
kept one, so a group of paraphrases collapses to its best-ranked member.

Trust shapes both rules (issue 17, crowding). An untrusted candidate is compared with the looser
``untrusted_dedup_cosine`` / ``untrusted_dedup_jaccard``, so near-copies of one planted
instruction collapse to one; an untrusted candidate never suppresses a trusted one, however
alike (a planted near-copy cannot push a user's statement out). And when the ranking holds any
trusted candidate, untrusted survivors are capped at ``untrusted_limit`` (the policy's
``max_untrusted_share`` of the block's entries); with no trusted candidate at all they fill it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cairn.ports import FloatVector
from cairn.recall.candidates import Candidate
from cairn.recall.keywords import jaccard
from cairn.recall.query import RecallPolicy
from cairn.recall.ranking import Ranked


@dataclass(frozen=True, slots=True)
class Deduplicated:
    """The survivors in rank order, and how many duplicates were dropped to get them."""

    kept: tuple[Ranked, ...]
    dropped: int


def _alike(left: Candidate, right: Candidate, cosine: float, overlap: float) -> bool:
    if left.content_digest == right.content_digest:
        return True
    if left.vector is not None and right.vector is not None:
        return float(np.dot(left.vector, right.vector)) >= cosine
    return jaccard(left.tokens, right.tokens) >= overlap


def is_paraphrase(left: Candidate, right: Candidate, policy: RecallPolicy) -> bool:
    """Whether ``left`` and ``right`` say the same thing, by the rules in the module docstring."""
    return _alike(left, right, policy.dedup_cosine, policy.dedup_jaccard)


def duplicates(later: Candidate, kept: Candidate, policy: RecallPolicy) -> bool:
    """Whether ``later`` (ranked below ``kept``) is dropped as a duplicate of it: never when
    ``later`` is trusted and ``kept`` is not; by the looser thresholds when ``later`` is
    untrusted."""
    if not later.trusted:
        return _alike(later, kept, policy.untrusted_dedup_cosine, policy.untrusted_dedup_jaccard)
    if not kept.trusted:
        return False
    return is_paraphrase(later, kept, policy)


def untrusted_limit(policy: RecallPolicy, top_k: int) -> int:
    """How many of ``top_k`` entries untrusted ones may take when trusted candidates exist."""
    return math.floor(policy.max_untrusted_share * top_k)


def deduplicate(
    ranked: Sequence[Ranked],
    policy: RecallPolicy,
    limit: int,
    *,
    any_trusted: bool | None = None,
) -> Deduplicated:
    """Collapse paraphrases to their best-ranked member, visiting ``ranked`` in order until
    ``limit`` survivors are found (no later survivor could be shown, so none is compared);
    untrusted survivors past their share are held back, and shown only if no trusted
    candidate exists. ``any_trusted`` says whether the whole ranking holds a trusted candidate
    when ``ranked`` is only its prefix (a recall index's answer); by default ``ranked`` is
    looked at."""
    if any_trusted is None:
        any_trusted = any(r.candidate.trusted for r in ranked)
    return Deduplication(policy, limit, any_trusted=any_trusted).over(ranked, unchanged=0)


class Deduplication:
    """``deduplicate`` over a ranking that grows, resumed where the ranking did not change.

    Whether an entry is kept depends only on the entries ranked before it, so after a
    ranking gains entries, the visit of its unchanged prefix stands: ``over`` restores the
    state from before the first changed position and visits on from there."""

    __slots__ = ("_cap", "_dropped", "_facts", "_kept", "_limit", "_policy", "_trail", "_untrusted")

    def __init__(self, policy: RecallPolicy, limit: int, *, any_trusted: bool) -> None:
        self._policy = policy
        self._limit = limit
        self._cap = untrusted_limit(policy, limit) if any_trusted else limit
        self._kept: list[Ranked] = []
        self._facts: list[_Facts] = []  # the kept candidates' facts, in ``_kept``'s order
        # Per visited position: how many were kept, untrusted and dropped before it.
        self._trail: list[tuple[int, int, int]] = []
        self._untrusted = 0
        self._dropped = 0

    @property
    def visited(self) -> int:
        """How many of the ranking's first entries the visit has read: up to the last survivor
        when ``limit`` were found."""
        return len(self._trail)

    def over(self, ranked: Sequence[Ranked], *, unchanged: int) -> Deduplicated:
        """Dedup's answer over ``ranked``, whose first ``unchanged`` entries are the first of
        the ranking the last call was given (0 on a first call)."""
        if unchanged < len(self._trail):
            kept, self._untrusted, self._dropped = self._trail[unchanged]
            del self._kept[kept:], self._facts[kept:], self._trail[unchanged:]
        policy, limit, kept_items, facts = self._policy, self._limit, self._kept, self._facts
        for position in range(len(self._trail), len(ranked)):
            if len(kept_items) >= limit:
                break
            self._trail.append((len(kept_items), self._untrusted, self._dropped))
            item = ranked[position]
            later = _facts_of(item.candidate)
            if _duplicates_any(later, facts, policy):
                self._dropped += 1
                continue
            if not later.trusted:
                if self._untrusted >= self._cap:
                    self._dropped += 1
                    continue
                self._untrusted += 1
            kept_items.append(item)
            facts.append(later)
        return Deduplicated(kept=tuple(kept_items), dropped=self._dropped)


class _Facts(NamedTuple):
    """What dedup compares of a candidate, read once."""

    trusted: bool
    digest: str
    vector: FloatVector | None
    tokens: tuple[str, ...]


def _facts_of(candidate: Candidate) -> _Facts:
    return _Facts(candidate.trusted, candidate.content_digest, candidate.vector, candidate.tokens)


def _duplicates_any(later: _Facts, kept: Sequence[_Facts], policy: RecallPolicy) -> bool:
    """``any(duplicates(later, k, policy) for k in kept)``, with what depends on ``later``
    alone looked up once."""
    digest, vector = later.digest, later.vector
    if not later.trusted:
        cosine, overlap, spare_untrusted = (
            policy.untrusted_dedup_cosine,
            policy.untrusted_dedup_jaccard,
            False,
        )
    else:
        cosine, overlap, spare_untrusted = policy.dedup_cosine, policy.dedup_jaccard, True
    for other in kept:
        if spare_untrusted and not other.trusted:
            continue
        if digest == other.digest:
            return True
        if vector is not None and other.vector is not None:
            # ``np.dot``'s own implementation, called as a method: a third less per pair.
            if float(vector.dot(other.vector)) >= cosine:
                return True
        elif jaccard(later.tokens, other.tokens) >= overlap:
            return True
    return False
