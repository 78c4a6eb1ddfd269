"""What a model must answer: the pydantic models that validate extraction and formation output.

The model never sees a record or event id. Messages are cited by ``evidence`` aliases and
existing records by ``target`` aliases, small integers that the prompt assigned and only the
caller can map back; an alias the prompt did not assign makes the answer invalid.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from cairn.models import SLUG_PATTERN, Frozen

# One line: a fact is a sentence or two; a session summary a short paragraph.
MAX_FACT_CHARS = 500
MAX_SUMMARY_CHARS = 2000
MAX_LABELS = 8
MAX_EVIDENCE = 32
# At most this many candidates per strategy and rollout: formation turns each into at most one
# change and applies a strategy's changes in one atomic batch of at most 16 (cairn.changes).
MAX_CANDIDATES = 16

Alias = Annotated[int, Field(ge=1, le=9999)]
MetadataKey = Annotated[str, Field(min_length=1, max_length=128)]
MetadataAnswer = float | Annotated[str, Field(max_length=256)] | list[str]
ShortLabel = Annotated[str, Field(min_length=1, max_length=64)]
CategorySlug = Annotated[str, Field(min_length=1, max_length=64, pattern=SLUG_PATTERN)]


def _one_line(text: str) -> str:
    if "\n" in text or "\r" in text:
        raise ValueError("must be one line (no line breaks)")
    if not text.strip():
        raise ValueError("must contain text, not only whitespace")
    return text.strip()


FactText = Annotated[str, Field(min_length=1, max_length=MAX_FACT_CHARS), AfterValidator(_one_line)]
SummaryText = Annotated[
    str, Field(min_length=1, max_length=MAX_SUMMARY_CHARS), AfterValidator(_one_line)
]


class CandidateAnswer(Frozen):
    """One memory the model proposes, citing the messages that support it."""

    content: FactText
    category: CategorySlug = "fact"
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    tags: tuple[ShortLabel, ...] = Field(default=(), max_length=MAX_LABELS)
    entities: tuple[ShortLabel, ...] = Field(default=(), max_length=MAX_LABELS)
    evidence: tuple[Alias, ...] = Field(min_length=1, max_length=MAX_EVIDENCE)
    # Values for the strategy's typed metadata fields ("metadata_fields" in the request);
    # cairn keeps those of the right type within the field's validation.
    metadata: dict[MetadataKey, MetadataAnswer] = Field(default_factory=dict, max_length=20)


class SummaryCandidate(CandidateAnswer):
    content: SummaryText  # a longer line than a fact's
    category: CategorySlug = "summary"


class ExtractionAnswer(Frozen):
    """Facts, preferences or custom memories: zero or more candidates."""

    candidates: tuple[CandidateAnswer, ...] = Field(max_length=MAX_CANDIDATES)


class SummaryAnswer(Frozen):
    """A session summary: none (nothing happened worth keeping) or exactly one."""

    candidates: tuple[SummaryCandidate, ...] = Field(max_length=1)


Action = Literal["create", "same", "merge", "supersede"]


class Decision(Frozen):
    """What to do with one candidate, given the existing records related to it."""

    candidate: Alias
    action: Action
    target: Alias | None = None
    content: FactText | None = None

    @model_validator(mode="after")
    def _target_and_content_fit_the_action(self) -> Self:
        if self.action == "create" and self.target is not None:
            raise ValueError("a create has no target")
        if self.action != "create" and self.target is None:
            raise ValueError(f"a {self.action} needs the target alias of an existing record")
        if self.action == "merge" and self.content is None:
            raise ValueError("a merge needs the merged content")
        return self


class FormationAnswer(Frozen):
    """One decision per candidate shown."""

    decisions: tuple[Decision, ...]
