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

import numpy as np

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
    cap = untrusted_limit(policy, limit) if any_trusted else limit
    kept: list[Ranked] = []
    untrusted = 0
    dropped = 0
    for item in ranked:
        if len(kept) >= limit:
            break
        candidate = item.candidate
        if _duplicates_any(candidate, kept, policy):
            dropped += 1
            continue
        if not candidate.trusted:
            if untrusted >= cap:
                dropped += 1
                continue
            untrusted += 1
        kept.append(item)
    return Deduplicated(kept=tuple(kept), dropped=dropped)


def _duplicates_any(later: Candidate, kept: Sequence[Ranked], policy: RecallPolicy) -> bool:
    """``any(duplicates(later, k.candidate, policy) for k in kept)``, with what depends on
    ``later`` alone looked up once."""
    digest, vector = later.content_digest, later.vector
    if not later.trusted:
        cosine, overlap, spare_untrusted = (
            policy.untrusted_dedup_cosine,
            policy.untrusted_dedup_jaccard,
            False,
        )
    else:
        cosine, overlap, spare_untrusted = policy.dedup_cosine, policy.dedup_jaccard, True
    for item in kept:
        other = item.candidate
        if spare_untrusted and not other.trusted:
            continue
        if digest == other.content_digest:
            return True
        if vector is not None and other.vector is not None:
            if float(np.dot(vector, other.vector)) >= cosine:
                return True
        elif jaccard(later.tokens, other.tokens) >= overlap:
            return True
    return False
