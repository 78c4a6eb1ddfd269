"""Retrieval quality: recall@k and hit@k over questions, overall and per category.

R@k is the fraction of a question's evidence turns found in its top k, averaged over questions;
hit@k is the share of questions with at least one evidence turn in their top k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.locomo import CATEGORY_NAMES, Question

KS = (1, 5, 10, 20)


@dataclass(frozen=True)
class Outcome:
    """One question's result: its category and where its evidence landed."""

    category: int
    recall: tuple[float, ...]
    hit: tuple[bool, ...]


def judge(question: Question, ranked_ids: Sequence[str], ks: Sequence[int] = KS) -> Outcome:
    """Score one ranked list of dia_ids (best first) against the question's evidence."""
    evidence = question.evidence
    recall: list[float] = []
    hit: list[bool] = []
    for k in ks:
        found = len(evidence.intersection(ranked_ids[:k]))
        recall.append(found / len(evidence))
        hit.append(found > 0)
    return Outcome(question.category, tuple(recall), tuple(hit))


@dataclass(frozen=True)
class Summary:
    """Mean R@k and hit@k over a group of questions."""

    questions: int
    recall: tuple[float, ...]
    hit: tuple[float, ...]


def summarise(outcomes: Sequence[Outcome], ks: Sequence[int] = KS) -> Summary:
    if not outcomes:
        return Summary(0, tuple(0.0 for _ in ks), tuple(0.0 for _ in ks))
    n = len(outcomes)
    recall = tuple(sum(o.recall[i] for o in outcomes) / n for i in range(len(ks)))
    hit = tuple(sum(o.hit[i] for o in outcomes) / n for i in range(len(ks)))
    return Summary(n, recall, hit)


def by_category(outcomes: Sequence[Outcome], ks: Sequence[int] = KS) -> dict[str, Summary]:
    """``overall`` first, then one summary per category name present."""
    groups = {"overall": summarise(outcomes, ks)}
    for category, name in CATEGORY_NAMES.items():
        members = [o for o in outcomes if o.category == category]
        if members:
            groups[name] = summarise(members, ks)
    return groups
