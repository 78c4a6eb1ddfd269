"""What every operation works with: the stores, the embedder, the clock and the settings, and
the extraction pipeline that counts appended events toward their triggers."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.api.errors import ApiError
from cairn.api.principals import Principal, Principals
from cairn.errors import ConfigurationError
from cairn.extract.staging import RolloutPipeline
from cairn.extract.triggers import BUILT_IN_TRIGGERS
from cairn.memories import MemoryConfig, MemoryStatus, TriggerConditions
from cairn.models import Scope
from cairn.ports import (
    Clock,
    Embedder,
    EventStore,
    IdempotencyStore,
    MemoryConfigStore,
    RecordDirectory,
    RecordStore,
    Stores,
)

DEFAULT_REGION = "us-east-1"
# The account id in memory ARNs: cairn has no AWS account of its own to name.
DEFAULT_ACCOUNT_ID = "000000000000"


@dataclass(frozen=True)
class ApiSettings:
    """How the API identifies itself (ARNs) and whom it lets in.

    ``token``: when set, every request must carry it (``x-cairn-token`` header, or
    ``Authorization: Bearer``); see ``cairn.api.auth``. ``principals``: when set, every request
    must come from one of them (a token's digest, or the caller's IAM ARN behind API Gateway)
    and touches only what it may (``cairn.api.principals``, ``cairn.api.guard``); ``token`` is
    then unused. ``built_in_triggers``: the trigger
    conditions of strategies that carry none (``cairn.extract.triggers``).
    """

    region: str = DEFAULT_REGION
    account_id: str = DEFAULT_ACCOUNT_ID
    token: str | None = None
    principals: Principals | None = None
    # When built-in strategies (no trigger conditions on the wire) release a rollout.
    built_in_triggers: TriggerConditions = BUILT_IN_TRIGGERS
    # The Kinesis streams this deployment delivers record changes to (the stack's
    # ``recordStreamArn``); a memory naming another is refused. ``None`` (``cairn serve``):
    # any stream is stored, none is delivered to (docs/deploy.md, "Record streaming").
    delivery_streams: frozenset[str] | None = None


@dataclass(frozen=True)
class ApiContext:
    """The ports of one backend plus the API's own state stores, all required.

    ``extraction``: when set, CreateEvent and IngestData append through it (counted toward the
    memory's triggers, rollouts staged and announced), the extraction jobs are its failed
    rollouts, and DeleteMemory erases its staged payloads too; without it events are stored
    and never extracted.
    """

    stores: Stores
    memories: MemoryConfigStore
    idempotency: IdempotencyStore
    directory: RecordDirectory
    embedder: Embedder | None
    clock: Clock
    settings: ApiSettings
    extraction: RolloutPipeline | None = None
    # The principal of the request being served (``Api.handle`` sets it per request); None
    # without a principals document: every actor and operation.
    principal: Principal | None = None

    @classmethod
    def build(
        cls,
        stores: Stores,
        *,
        embedder: Embedder | None,
        clock: Clock,
        settings: ApiSettings | None = None,
        extraction: RolloutPipeline | None = None,
    ) -> ApiContext:
        """A context over ``stores``; ``ConfigurationError`` if the backend lacks the
        memory-configuration, idempotency or record-directory store."""
        if stores.memories is None or stores.idempotency is None or stores.directory is None:
            missing = [
                n for n in ("memories", "idempotency", "directory") if not getattr(stores, n)
            ]
            raise ConfigurationError(
                "this backend cannot serve the AgentCore API: it has no "
                + ", ".join(missing)
                + " store; use the in-memory, SQLite or DynamoDB backend"
            )
        return cls(
            stores=stores,
            memories=stores.memories,
            idempotency=stores.idempotency,
            directory=stores.directory,
            embedder=embedder,
            clock=clock,
            settings=settings or ApiSettings(),
            extraction=extraction,
        )

    @property
    def records(self) -> RecordStore:
        return self.stores.records

    @property
    def events(self) -> EventStore:
        return self.stores.events

    def memory(self, memory_id: str) -> MemoryConfig:
        """The active memory a data-plane path names (an id or a full memory ARN); 404 else."""
        bare = memory_id
        if memory_id.startswith("arn:"):
            bare = memory_id.rsplit("memory/", 1)[-1]
        found = self.memories.get(bare)
        if memory_id != bare and found.arn != memory_id:
            raise ApiError.not_found(f"no memory with the ARN {memory_id!r} is served here")
        if found.status is MemoryStatus.DELETING:
            raise ApiError.not_found(f"memory {bare!r} is being deleted")
        return found


def scope_of(memory: MemoryConfig, actor_id: str) -> Scope:
    return Scope(memory_id=memory.memory_id, actor_id=actor_id)
