"""Memory resources: a memory's configuration (strategies, triggers, limits) and its templates.

A memory (``memoryId``) is configured once and then holds events and records. Its strategies
say what extraction makes of events and where the records go: each has one namespace template
such as ``/strategies/{memoryStrategyId}/actors/{actorId}/``. The template is also how cairn
learns whose record a namespace names (``cairn.namespace_actors``).
"""

from __future__ import annotations

import re
import secrets
import string
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from cairn.models import Frozen, MemoryId, UtcDatetime
from cairn.record_schemas import RecordSchema

MEMORY_NAME_PATTERN = r"^[a-zA-Z][a-zA-Z0-9_]{0,47}$"
RESOURCE_ID_PATTERN = r"^[a-zA-Z][a-zA-Z0-9\-_]{0,99}-[a-zA-Z0-9]{10}$"
ARN_PATTERN = (
    r"^arn:[a-z0-9\-.]{1,63}:[a-z0-9\-.]{0,63}:[a-z0-9\-.]{0,63}:[a-z0-9\-.]{0,63}:[^/].{0,1023}$"
)
BUCKET_PATTERN = r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$"
TEMPLATE_PATTERN = r"^[a-zA-Z0-9\-_/]*(\{[a-zA-Z][a-zA-Z0-9]*\}[a-zA-Z0-9\-_/]*)*$"
NAMESPACE_KEY_PATTERN = r"^[a-z][a-z0-9]*$"
BUILT_IN_VARIABLES = frozenset({"actorId", "sessionId", "memoryStrategyId"})

MemoryName = Annotated[str, Field(pattern=MEMORY_NAME_PATTERN)]
ResourceId = Annotated[str, Field(min_length=12, pattern=RESOURCE_ID_PATTERN)]
Arn = Annotated[str, Field(pattern=ARN_PATTERN)]
Description = Annotated[str, Field(min_length=1, max_length=4096)]
NamespaceTemplate = Annotated[str, Field(min_length=1, max_length=512, pattern=TEMPLATE_PATTERN)]

_ALNUM = string.ascii_letters + string.digits
_VARIABLE = re.compile(r"\{([a-zA-Z][a-zA-Z0-9]*)\}")


def new_resource_id(name: str) -> str:
    """``<name>-<10 random alphanumerics>``, the shape of AgentCore memory and strategy ids."""
    return f"{name}-{''.join(secrets.choice(_ALNUM) for _ in range(10))}"


def memory_arn(region: str, account_id: str, memory_id: str) -> str:
    """``arn:aws:bedrock-agentcore:<region>:<account>:memory/<id>``."""
    return f"arn:aws:bedrock-agentcore:{region}:{account_id}:memory/{memory_id}"


class StrategyKind(StrEnum):
    """What a strategy extracts; the values are cairn's record ``strategy`` slugs."""

    SEMANTIC = "semantic"
    SUMMARY = "summary"
    USER_PREFERENCE = "user_preference"
    CUSTOM = "custom"
    # Episodes (one per extracted segment of a session) and reflections across them
    # (``cairn.extract.episodes``, ``cairn.extract.reflections``).
    EPISODIC = "episodic"


class MemoryStatus(StrEnum):
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    FAILED = "FAILED"
    DELETING = "DELETING"
    UPDATING = "UPDATING"


class TriggerConditions(Frozen):
    """When self-managed extraction runs: whichever set condition is met first (one at least)."""

    message_count: int | None = Field(default=None, ge=1, le=50)
    token_count: int | None = Field(default=None, ge=100, le=500_000)
    idle_session_timeout_seconds: int | None = Field(default=None, ge=10, le=3000)

    @model_validator(mode="after")
    def _one_is_set(self) -> Self:
        if (self.message_count, self.token_count, self.idle_session_timeout_seconds) == (
            None,
            None,
            None,
        ):
            raise ValueError("set at least one trigger condition (message, token or idle time)")
        return self


class SelfManagedConfig(Frozen):
    """A custom strategy run by the user's own extractor: the triggers and where to notify it."""

    triggers: TriggerConditions
    topic_arn: Arn
    payload_bucket: Annotated[str, Field(pattern=BUCKET_PATTERN)]
    historical_context_window_size: int = Field(default=4, ge=0, le=50)


# A record's expiry, kept in two metadata keys (the API's wire form; ``#`` never occurs in a wire
# metadata key): when it expires (ISO 8601 UTC) and the days it was given.
RECORD_EXPIRES_KEY = "agentcore#expiresAt"
RECORD_EXPIRY_DAYS_KEY = "agentcore#expiryDays"
ExpiryDays = Annotated[int, Field(ge=31, le=36_500)]


def expiry_metadata(days: int, since: datetime) -> dict[str, str]:
    """The metadata of a record that expires ``days`` after ``since``."""
    at = (since + timedelta(days=days)).astimezone(UTC)
    return {RECORD_EXPIRES_KEY: at.isoformat(), RECORD_EXPIRY_DAYS_KEY: str(days)}


AppendedPrompt = Annotated[str, Field(min_length=1, max_length=30_000)]
ModelId = Annotated[str, Field(min_length=1, max_length=2048)]


class PromptOverride(Frozen):
    """A built-in strategy run with its owner's additions (AgentCore's ``semanticOverride``,
    ``summaryOverride``, ``userPreferenceOverride``): extracted as ``base``, with the strategy's
    ``extraction_prompt`` appended. The model ids and the consolidation prompt are kept as
    given; cairn calls its deployment's one model provider and consolidates per scope."""

    base: Literal[
        StrategyKind.SEMANTIC,
        StrategyKind.SUMMARY,
        StrategyKind.USER_PREFERENCE,
        StrategyKind.EPISODIC,
    ]
    extraction_model: ModelId | None = None
    consolidation_prompt: AppendedPrompt | None = None
    consolidation_model: ModelId | None = None
    # An episodic override's reflection step: appended to the reflection instructions.
    reflection_prompt: AppendedPrompt | None = None
    reflection_model: ModelId | None = None


class StrategyConfig(Frozen):
    """One strategy of a memory, with the single namespace template its records are filed under."""

    strategy_id: ResourceId
    name: MemoryName
    description: Description | None = None
    kind: StrategyKind
    namespace_template: NamespaceTemplate
    self_managed: SelfManagedConfig | None = None
    # Appended to the built-in extraction instructions (AgentCore's ``appendToPrompt``);
    # a ``custom`` strategy without a self-managed configuration is extracted with it.
    extraction_prompt: AppendedPrompt | None = None
    # A custom strategy that overrides a built-in one's prompts extracts as that one.
    override: PromptOverride | None = None
    # Records this strategy extracts expire that many days after extraction (AgentCore's
    # ``recordExpirySpecification`` on a strategy).
    record_expiry_days: ExpiryDays | None = None
    # An episodic strategy's reflections go here: the episodic template itself or a prefix of
    # it at a segment boundary, with ``{actorId}`` (``reflection_template_problem``).
    reflection_template: NamespaceTemplate | None = None
    # The typed metadata its records carry (AgentCore's ``memoryRecordSchema``).
    record_schema: RecordSchema | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @model_validator(mode="after")
    def _reflections_only_for_episodes(self) -> Self:
        episodic = self.extracts_as is StrategyKind.EPISODIC
        if episodic and self.reflection_template is None:
            raise ValueError("an episodic strategy needs a reflection namespace template")
        if not episodic and self.reflection_template is not None:
            raise ValueError("only an episodic strategy has a reflection namespace template")
        if self.reflection_template is not None:
            problem = reflection_template_problem(self.namespace_template, self.reflection_template)
            if problem is not None:
                raise ValueError(problem)
        return self

    @property
    def templates(self) -> tuple[str, ...]:
        """Every template this strategy files records under (episodes, then reflections)."""
        if self.reflection_template is None or self.reflection_template == self.namespace_template:
            return (self.namespace_template,)
        return (self.namespace_template, self.reflection_template)

    @property
    def extracts_as(self) -> StrategyKind:
        """The kind whose instructions and answer shape extraction uses."""
        return self.override.base if self.override is not None else self.kind


class IndexedKey(Frozen):
    key: Annotated[str, Field(min_length=1, max_length=128)]
    type: Literal["STRING", "STRINGLIST", "NUMBER"]


def _not_built_in(key: str) -> str:
    if key in BUILT_IN_VARIABLES:
        raise ValueError(f"{key} is a built-in template variable; choose another key")
    return key


class NamespaceKey(Frozen):
    """A custom template variable, e.g. ``{team}``, and the values it may take."""

    key: Annotated[
        str,
        Field(min_length=1, max_length=32, pattern=NAMESPACE_KEY_PATTERN),
        AfterValidator(_not_built_in),
    ]
    allowed_values: tuple[str, ...] | None = None
    regex_pattern: Annotated[str, Field(min_length=1, max_length=64)] | None = None


KINESIS_STREAM_ARN_PATTERN = (
    r"^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]{1,128}$"
)
StreamLevel = Literal["METADATA_ONLY", "FULL_CONTENT"]


class StreamDelivery(Frozen):
    """Where a memory's record changes are delivered (``streamDeliveryResources``): one
    Kinesis data stream, one event per record version written, and how much of the record an
    event carries (``level``; as given, ``None`` delivering metadata only). Erased records are
    delivered as tombstones whatever the level (``cairn.streaming``). Changes committed before
    ``enabled_at`` (delivery turned on, or pointed at another stream) are not delivered."""

    data_stream_arn: Annotated[str, Field(pattern=KINESIS_STREAM_ARN_PATTERN)]
    level: StreamLevel | None = None
    enabled_at: UtcDatetime

    @property
    def full_content(self) -> bool:
        return self.level == "FULL_CONTENT"


class MemoryConfig(Frozen):
    """A memory resource's configuration; ``revision`` grows by one with every stored change."""

    # Any cairn memory id: the API mints AgentCore-shaped ones (`<name>-<10 alnum>`, enforced on
    # the wire), while an embedded memory nobody created is simply `default`.
    memory_id: MemoryId
    arn: str
    name: MemoryName
    description: Description | None = None
    event_expiry_days: int = Field(ge=1, le=3650)
    status: MemoryStatus = MemoryStatus.ACTIVE
    created_at: UtcDatetime
    updated_at: UtcDatetime
    strategies: tuple[StrategyConfig, ...] = ()
    execution_role_arn: Arn | None = None
    indexed_keys: tuple[IndexedKey, ...] = ()
    namespace_keys: tuple[NamespaceKey, ...] = ()
    stream: StreamDelivery | None = None
    # Set (never cleared) once a record of the memory is given an expiry, so only such a
    # memory's searches pay for checking it.
    records_expire: bool = False
    revision: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _strategies_are_distinct(self) -> Self:
        for attribute in ("strategy_id", "name"):
            values = [getattr(s, attribute) for s in self.strategies]
            if len(values) != len(set(values)):
                raise ValueError(f"two strategies of a memory share a {attribute}")
        return self

    def strategy(self, strategy_id: str) -> StrategyConfig | None:
        return next((s for s in self.strategies if s.strategy_id == strategy_id), None)

    def revised(self, now: datetime, **changes: object) -> MemoryConfig:
        """This configuration with ``changes``, the next revision, updated at ``now``."""
        values = {**self.model_dump(), **changes, "revision": self.revision + 1, "updated_at": now}
        return MemoryConfig.model_validate(values)


def reflection_template_problem(episodes: str, reflections: str) -> str | None:
    """Why ``reflections`` cannot hold the reflections on episodes filed under ``episodes``,
    else ``None``. It must name the actor (cairn keeps each actor's memory apart, so erasing
    an actor reaches every reflection on their episodes) and be ``episodes`` or a prefix of it
    ending at a ``/`` (the service's "less nested than the episodic namespaces"): the episodes
    a reflection reads are those under its namespace."""
    if "{actorId}" not in reflections:
        return (
            "the reflection namespace template must contain {actorId}: cairn reflects within "
            "one actor's episodes, so that erasing an actor erases every reflection on them"
        )
    stem, wanted = reflections.rstrip("/"), episodes.rstrip("/")
    if not (wanted == stem or wanted.startswith(stem + "/")):
        return (
            f"the reflection namespace template {reflections!r} must be the episodic template "
            f"{episodes!r} or a prefix of it ending at a '/' (less nested), so that the "
            "episodes a reflection draws on lie under it"
        )
    return None


def template_variables(template: str) -> list[str]:
    """The ``{variable}`` names in a namespace template, in order."""
    return _VARIABLE.findall(template)
