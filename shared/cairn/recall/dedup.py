"""Step 4, paraphrase dedup, before any budget is spent: a near-duplicate of a better-ranked
survivor is dropped, so a repeat can never take the place of a distinct memory.

Two candidates are duplicates when their content digests are equal (an exact repeat after
canonicalisation); or, when both have vectors, their cosine is at least ``dedup_cosine``; or,
when either lacks a vector, the Jaccard similarity of their token sets is at least
``dedup_jaccard``. Candidates are visited best first; each is kept only if it duplicates no
kept one, so a group of paraphrases collapses to its best-ranked member.
"""

from __future__ import annotations

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


def is_paraphrase(left: Candidate, right: Candidate, policy: RecallPolicy) -> bool:
    """Whether ``left`` and ``right`` say the same thing, by the rules in the module docstring."""
    if left.version.content_digest == right.version.content_digest:
        return True
    if left.vector is not None and right.vector is not None:
        return float(np.dot(left.vector, right.vector)) >= policy.dedup_cosine
    return jaccard(left.tokens, right.tokens) >= policy.dedup_jaccard


def deduplicate(ranked: Sequence[Ranked], policy: RecallPolicy, limit: int) -> Deduplicated:
    """Collapse paraphrases to their best-ranked member, visiting ``ranked`` in order until
    ``limit`` survivors are found (no later survivor could be shown, so none is compared)."""
    kept: list[Ranked] = []
    dropped = 0
    for item in ranked:
        if len(kept) >= limit:
            break
        if any(is_paraphrase(item.candidate, k.candidate, policy) for k in kept):
            dropped += 1
        else:
            kept.append(item)
    return Deduplicated(kept=tuple(kept), dropped=dropped)
