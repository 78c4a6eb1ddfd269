"""Strategies: what each kind asks the model for, where its records go, and how an answer becomes
candidate records.

- ``semantic`` (facts), ``user_preference`` and ``custom`` ask for up to 16 one-line candidates;
  ``summary`` for at most one summary of the session. A strategy's ``extraction_prompt`` is
  appended to the built-in instructions (for ``custom``, to the fact instructions); a custom
  strategy that overrides a built-in one (``StrategyConfig.override``) extracts as that one.
- Records go to the strategy's namespace template with ``{actorId}``, ``{sessionId}`` and
  ``{memoryStrategyId}`` filled in; a template that does not resolve to a valid namespace (a
  custom variable extraction cannot fill, a malformed result) is refused before any model call.
- A strategy with ``record_expiry_days`` gives each candidate that expiry, counted from the
  rollout's staging (``cairn.memories.expiry_metadata``).
- Every candidate is model-sourced and untrusted: one ``Source(kind=model)`` per cited event,
  each naming the rollout, the session and the role of the message's speaker (a candidate that
  cites only the user's own turns has the user's authority, ``cairn.authority``); its
  confidence is capped (``ExtractionPolicy``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cairn.answers.extraction import CandidateAnswer, ExtractionAnswer, SummaryAnswer
from cairn.changes import NewRecord
from cairn.errors import InvalidInputError, InvalidModelOutputError
from cairn.extract.extraction_policy import ExtractionPolicy
from cairn.extract.prompts import (
    EXTRACTION_SCHEMA,
    ContextMessage,
    ExtractionInput,
    MetadataFieldPrompt,
    PromptMessage,
    extraction_request,
)
from cairn.llm.structured import ask_structured, parse_json_model
from cairn.memories import StrategyConfig, StrategyKind, expiry_metadata, template_variables
from cairn.model_request import ModelUsage, OutputSchema
from cairn.models import NAMESPACE_PATTERN, Source, SourceKind
from cairn.ports import ModelProvider
from cairn.rollout.payload import RolloutMessage, RolloutPayload

# The metadata key cairn's AgentCore API reads a record's memoryStrategyId from
# (cairn.api.record_codec.STRATEGY_ID_KEY); a test keeps the two equal.
STRATEGY_ID_METADATA_KEY = "agentcore#memoryStrategyId"

# A user_preference or summary strategy files its records under one category whatever the
# model calls them, so recall and the cli group them the same way.
_FIXED_CATEGORY = {StrategyKind.USER_PREFERENCE: "preference", StrategyKind.SUMMARY: "summary"}


def resolve_namespace(strategy: StrategyConfig, *, actor_id: str, session_id: str) -> str:
    """The namespace ``strategy``'s records of this actor and session go to.

    Raises ``InvalidInputError`` when the template uses a variable extraction cannot fill or
    resolves to something that is not a valid namespace.
    """
    values = {
        "actorId": actor_id,
        "sessionId": session_id,
        "memoryStrategyId": strategy.strategy_id,
    }
    unknown = [
        name for name in template_variables(strategy.namespace_template) if name not in values
    ]
    if unknown:
        raise InvalidInputError(
            f"strategy {strategy.strategy_id!r} files records under a template with "
            f"{{{unknown[0]}}}, which extraction cannot fill; use only {{actorId}}, "
            "{sessionId} and {memoryStrategyId} in an extracted strategy's template"
        )
    namespace = strategy.namespace_template
    for name, value in values.items():
        namespace = namespace.replace(f"{{{name}}}", value)
    if not namespace or len(namespace) > 1024 or not re.fullmatch(NAMESPACE_PATTERN, namespace):
        raise InvalidInputError(
            f"strategy {strategy.strategy_id!r}'s namespace template does not resolve to a "
            "valid namespace for this actor and session (letters, digits, - _ / and : between "
            "segments); change the template"
        )
    return namespace


def metadata_prompts(strategy: StrategyConfig) -> tuple[MetadataFieldPrompt, ...]:
    """The typed fields of the strategy's record schema the model is asked to fill."""
    schema = strategy.record_schema
    return tuple(
        MetadataFieldPrompt(
            key=f.key,
            type=f.type or "STRING",
            definition=f.definition or "",
            instruction=f.instruction,
            allowed_values=f.validation.allowed_values if f.validation else None,
            max_items=f.validation.max_items if f.validation else None,
            min_value=f.validation.min_value if f.validation else None,
            max_value=f.validation.max_value if f.validation else None,
        )
        for f in (schema.inferred if schema is not None else ())
    )


def answer_type(kind: StrategyKind) -> type[ExtractionAnswer] | type[SummaryAnswer]:
    return SummaryAnswer if kind is StrategyKind.SUMMARY else ExtractionAnswer


@dataclass(frozen=True, slots=True)
class StrategyExtraction:
    """One strategy's candidates, or ``None`` with the reason its answer was refused twice."""

    strategy: StrategyConfig
    namespace: str
    candidates: tuple[NewRecord, ...] | None
    reason: str | None
    usage: ModelUsage


def extract_candidates(
    model: ModelProvider,
    payload: RolloutPayload,
    strategy: StrategyConfig,
    *,
    namespace: str,
    summary_so_far: str | None,
    policy: ExtractionPolicy,
) -> StrategyExtraction:
    """Ask ``model`` for ``strategy``'s candidates in ``payload``'s messages (one call, and one
    more if the answer is invalid). Model timeouts and throttling propagate, retryable."""
    aliases = dict(enumerate(payload.events, start=1))
    document = ExtractionInput(
        strategy=strategy.extracts_as,
        messages=tuple(
            PromptMessage(alias=alias, role=m.role, text=m.text, speaker=m.speaker_id)
            for alias, m in aliases.items()
        ),
        history=tuple(
            ContextMessage(role=m.role, text=m.text, speaker=m.speaker_id) for m in payload.history
        ),
        summary_so_far=summary_so_far if strategy.extracts_as is StrategyKind.SUMMARY else None,
        metadata_fields=metadata_prompts(strategy),
    )
    kind_answer = answer_type(strategy.extracts_as)
    request = extraction_request(
        document,
        output=OutputSchema.of(kind_answer, EXTRACTION_SCHEMA, "Memories worth keeping."),
        appended=strategy.extraction_prompt,
        policy=policy,
    )

    def read(text: str) -> tuple[NewRecord, ...]:
        answer = parse_json_model(text, kind_answer)
        return tuple(
            candidate_record(
                found,
                aliases,
                payload=payload,
                strategy=strategy,
                namespace=namespace,
                policy=policy,
            )
            for found in answer.candidates
        )

    answered = ask_structured(model, request, read)
    return StrategyExtraction(
        strategy=strategy,
        namespace=namespace,
        candidates=answered.value,
        reason=answered.reason,
        usage=answered.usage,
    )


def candidate_record(
    found: CandidateAnswer,
    aliases: Mapping[int, RolloutMessage],
    *,
    payload: RolloutPayload,
    strategy: StrategyConfig,
    namespace: str,
    policy: ExtractionPolicy,
) -> NewRecord:
    """The record a candidate proposes, sourced to its rollout and the events it cites.

    Raises ``InvalidModelOutputError`` when it cites an alias the prompt did not assign.
    """
    unknown = [alias for alias in found.evidence if alias not in aliases]
    if unknown:
        raise InvalidModelOutputError(
            f"evidence alias {unknown[0]} names no message (the messages are 1-{len(aliases)})"
        )
    cited = _distinct(aliases[alias] for alias in found.evidence)
    days = strategy.record_expiry_days
    expiry = expiry_metadata(days, payload.created_at) if days is not None else {}
    schema = strategy.record_schema
    typed = schema.kept(dict(found.metadata)) if schema is not None else {}
    return NewRecord(
        namespace=namespace,
        strategy=strategy.extracts_as.value,
        category=_FIXED_CATEGORY.get(strategy.extracts_as, found.category),
        content=found.content,
        confidence=min(found.confidence, policy.inferred_confidence_cap),
        tags=tuple(dict.fromkeys(found.tags)),
        entities=tuple(dict.fromkeys(found.entities)),
        sources=tuple(
            Source(
                kind=SourceKind.MODEL,
                event_id=message.event_id,
                session_id=payload.session_id,
                rollout_id=payload.rollout_id,
                speaker=message.role,
                speaker_id=message.speaker_id,
            )
            for message in cited
        ),
        metadata={STRATEGY_ID_METADATA_KEY: strategy.strategy_id, **expiry, **typed},
        seen_at=max(message.event_timestamp for message in cited),
    )


def _distinct(messages: Iterable[RolloutMessage]) -> list[RolloutMessage]:
    """The cited messages, one per event, in citation order."""
    by_event: dict[str, RolloutMessage] = {}
    for message in messages:
        by_event.setdefault(message.event_id, message)
    return list(by_event.values())
