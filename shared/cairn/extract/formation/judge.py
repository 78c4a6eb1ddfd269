"""The formation judge: which candidates repeat, merge into, supersede or sit beside a record.

``formation_input`` builds the only view of the store a judge gets: candidates and their related
records under small integer aliases, never record ids. ``ModelJudge`` asks a model provider
(the offline ``HeuristicModel`` answers too) and checks the answer against the document:
every candidate decided once, every target one of that candidate's related aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cairn.answers.extraction import Decision, FormationAnswer
from cairn.changes import NewRecord
from cairn.errors import InvalidModelOutputError
from cairn.extract.extraction_policy import ExtractionPolicy
from cairn.extract.formation.neighbours import Neighbour
from cairn.extract.prompts import (
    MAX_EXISTING_CHARS,
    CandidateCase,
    ExistingMemory,
    FormationInput,
    formation_request,
    shortened,
)
from cairn.llm.structured import ask_structured, parse_json_model
from cairn.model_request import NO_USAGE, ModelUsage
from cairn.models import RecordVersion, Trust
from cairn.ports import ModelProvider


class Judge(Protocol):
    def __call__(self, document: FormationInput) -> Sequence[Decision]:
        """One decision per candidate of ``document``, targets among its related aliases;
        ``InvalidModelOutputError`` when no valid decisions could be had."""
        ...


def formation_input(
    candidates: Sequence[NewRecord], near: Sequence[Sequence[Neighbour]], cases: Sequence[int]
) -> tuple[FormationInput, dict[int, RecordVersion]]:
    """The judge's document for ``cases`` (candidate positions) and what its aliases stand for.

    Candidates are aliased 1..n in ``cases`` order; existing records 1..m in order of first
    appearance, with the same alias wherever a record recurs.
    """
    aliases: dict[str, int] = {}
    existing: list[ExistingMemory] = []
    by_alias: dict[int, RecordVersion] = {}
    shown: list[CandidateCase] = []
    for position, index in enumerate(cases, start=1):
        related: list[int] = []
        for neighbour in near[index]:
            version = neighbour.version
            if version.record_id not in aliases:
                alias = aliases[version.record_id] = len(aliases) + 1
                by_alias[alias] = version
                existing.append(_shown(alias, version))
            related.append(aliases[version.record_id])
        candidate = candidates[index]
        shown.append(
            CandidateCase(
                candidate=position,
                content=candidate.content,
                category=candidate.category,
                related=tuple(related),
            )
        )
    return FormationInput(existing=tuple(existing), candidates=tuple(shown)), by_alias


def _shown(alias: int, version: RecordVersion) -> ExistingMemory:
    return ExistingMemory(
        alias=alias,
        content=shortened(version.content, MAX_EXISTING_CHARS),
        category=version.category,
        stated_by="user" if version.trust is Trust.TRUSTED else "inferred",
    )


def check_decisions(document: FormationInput, decisions: Sequence[Decision]) -> None:
    """Raise ``InvalidModelOutputError`` unless every candidate of ``document`` is decided
    exactly once, each target among that candidate's related aliases."""
    related = {case.candidate: case.related for case in document.candidates}
    seen: set[int] = set()
    for decision in decisions:
        if decision.candidate not in related:
            raise InvalidModelOutputError(
                f"a decision names candidate {decision.candidate}, which was not shown "
                f"(the candidates are 1-{len(related)})"
            )
        if decision.candidate in seen:
            raise InvalidModelOutputError(f"candidate {decision.candidate} is decided twice")
        seen.add(decision.candidate)
        if decision.target is not None and decision.target not in related[decision.candidate]:
            raise InvalidModelOutputError(
                f"candidate {decision.candidate}'s target {decision.target} is not one of its "
                "related memories"
            )
    missing = sorted(set(related) - seen)
    if missing:
        raise InvalidModelOutputError(f"candidate {missing[0]} has no decision")


class ModelJudge:
    """A judge that asks ``model`` (one call, one more if the answer is invalid) and adds the
    usage of every call to ``usage``; model timeouts and throttling propagate, retryable."""

    def __init__(self, model: ModelProvider, policy: ExtractionPolicy) -> None:
        self._model = model
        self._policy = policy
        self.usage: ModelUsage = NO_USAGE

    def __call__(self, document: FormationInput) -> Sequence[Decision]:
        def read(text: str) -> tuple[Decision, ...]:
            decisions = parse_json_model(text, FormationAnswer).decisions
            check_decisions(document, decisions)
            return decisions

        answered = ask_structured(
            self._model, formation_request(document, policy=self._policy), read
        )
        self.usage += answered.usage
        if answered.value is None:
            raise InvalidModelOutputError(answered.reason or "no decisions")
        return answered.value
