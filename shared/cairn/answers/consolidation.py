"""What a consolidation answer must be: at most 16 changes, each citing small integer aliases.

The model never sees a record or rollout id. Records are cited by their alias in the
request's ``records``, evidence by its alias in ``evidence``; only the caller maps them back
(``cairn.consolidate.validate``), and an alias the request did not assign makes the answer
invalid. Four kinds: ``add`` (a new fact, preference or procedure the evidence shows, possibly
replacing a record it shows changed),
``merge`` (records that repeat one another), ``retract`` (no longer true, by the evidence)
and ``contradiction`` (two records that cannot both hold; ``holds`` names the one that does,
or is left out when nothing decides).
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from cairn.answers.extraction import MAX_LABELS, Alias, CategorySlug, FactText, ShortLabel
from cairn.changes import MAX_CHANGES_PER_APPLY, MAX_CONSUMED_ROLLOUTS
from cairn.models import Frozen

MAX_MERGED = 8
MAX_REASON_CHARS = 200


def _one_line(text: str) -> str:
    if "\n" in text or "\r" in text or not text.strip():
        raise ValueError("must be one line of text")
    return text.strip()


Reason = Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS), AfterValidator(_one_line)]
Evidence = tuple[Alias, ...]


class AddChange(Frozen):
    """A new memory the evidence shows and no record holds; ``supersedes`` names the record it
    replaces when the evidence shows that record changed."""

    kind: Literal["add"]
    content: FactText
    category: CategorySlug = "fact"
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.6
    tags: tuple[ShortLabel, ...] = Field(default=(), max_length=MAX_LABELS)
    evidence: Evidence = Field(min_length=1, max_length=MAX_CONSUMED_ROLLOUTS)
    supersedes: Alias | None = None


class MergeChange(Frozen):
    """Records that say the same thing, as one line keeping every detail."""

    kind: Literal["merge"]
    records: tuple[Alias, ...] = Field(min_length=2, max_length=MAX_MERGED)
    content: FactText
    evidence: Evidence = Field(default=(), max_length=MAX_CONSUMED_ROLLOUTS)

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        if len(set(self.records)) != len(self.records):
            raise ValueError("a merge names each record once")
        return self


class RetractChange(Frozen):
    """A record the evidence shows is no longer true."""

    kind: Literal["retract"]
    record: Alias
    reason: Reason
    evidence: Evidence = Field(min_length=1, max_length=MAX_CONSUMED_ROLLOUTS)


class ContradictionChange(Frozen):
    """Two records about one subject that cannot both hold; ``holds`` is the one that does."""

    kind: Literal["contradiction"]
    records: tuple[Alias, Alias]
    holds: Alias | None = None
    reason: Reason | None = None
    evidence: Evidence = Field(default=(), max_length=MAX_CONSUMED_ROLLOUTS)

    @model_validator(mode="after")
    def _two_records_and_one_of_them_holds(self) -> Self:
        if self.records[0] == self.records[1]:
            raise ValueError("a contradiction is between two different records")
        if self.holds is not None and self.holds not in self.records:
            raise ValueError("holds must be one of the two records")
        return self


ProposedChange = AddChange | MergeChange | RetractChange | ContradictionChange


class ConsolidationAnswer(Frozen):
    """At most 16 changes (the prompt asks for four); none when nothing needs changing."""

    changes: tuple[ProposedChange, ...] = Field(default=(), max_length=MAX_CHANGES_PER_APPLY)
