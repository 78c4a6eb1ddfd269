"""Which trigger policy a memory's events are counted under, and cairn's built-in defaults.

A self-managed (custom) strategy carries its own trigger conditions and history window on the
wire. The built-in strategies (semantic, summary, user_preference) carry none, so cairn's own
extractor runs them under ``BUILT_IN_TRIGGERS``: a rollout every 6 messages (three exchanges:
enough context to state a fact, small enough to extract within seconds), or every ~4,000
estimated tokens (about 16 KB of text, a bounded prompt), or after 10 minutes of silence, with
the 4 messages before the batch as context. Where the API's extractor runs in-process
(``IN_PROCESS_TRIGGERS``: ``cairn serve``) they extract every 2 messages or after 10 s of
silence; the embedded worker sweeps for idle sessions every 5 s.

A session counts once, under one policy for the whole memory (``policy_for``): each condition
is the most eager among the strategies (the smallest count, the shortest idle timeout) and the
history window the widest, and every rollout is for every strategy. An extractor for a strategy
with a smaller window reads only the tail of ``history``. A strategy's own topic and bucket are
not used: every rollout is staged and announced once, where cairn's stack puts it, and any
extractor may subscribe (DESIGN §6).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cairn.memories import MemoryConfig, StrategyConfig, StrategyKind, TriggerConditions
from cairn.rollout.index import TriggerPolicy

BUILT_IN_TRIGGERS = TriggerConditions(
    message_count=6, token_count=4_000, idle_session_timeout_seconds=600
)
# Where the API's extractor runs in the same process (`cairn serve`), a rollout
# costs no queue hop and no paid model call, so the built-in strategies extract every exchange
# (2 messages) or after 10 s of silence (AgentCore's smallest idle timeout), and the worker's
# sweep looks for idle sessions every 5 s: a short conversation is filed within seconds, as the
# managed service files it within tens of seconds.
IN_PROCESS_TRIGGERS = TriggerConditions(
    message_count=2, token_count=4_000, idle_session_timeout_seconds=10
)
IN_PROCESS_SWEEP_EVERY = timedelta(seconds=5)
BUILT_IN_HISTORY_WINDOW = 4
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def strategy_triggers(
    strategy: StrategyConfig, built_in: TriggerConditions = BUILT_IN_TRIGGERS
) -> tuple[TriggerConditions, int]:
    """The strategy's trigger conditions and history window: its own if self-managed, else
    ``built_in``."""
    if strategy.self_managed is not None:
        managed = strategy.self_managed
        return managed.triggers, managed.historical_context_window_size
    return built_in, BUILT_IN_HISTORY_WINDOW


def _most_eager(values: list[int | None]) -> int | None:
    present = [value for value in values if value is not None]
    return min(present) if present else None


def policy_for(
    memory: MemoryConfig, built_in: TriggerConditions = BUILT_IN_TRIGGERS
) -> TriggerPolicy | None:
    """The policy the memory's sessions are counted under, built-in strategies under
    ``built_in``; ``None`` if it has no strategies (its events are stored and never
    extracted)."""
    if not memory.strategies:
        return None
    settings = [strategy_triggers(strategy, built_in) for strategy in memory.strategies]
    return TriggerPolicy(
        message_count=_most_eager([t.message_count for t, _ in settings]),
        token_count=_most_eager([t.token_count for t, _ in settings]),
        idle_timeout_seconds=_most_eager([t.idle_session_timeout_seconds for t, _ in settings]),
        history_window=max(window for _, window in settings),
        strategy_ids=tuple(strategy.strategy_id for strategy in memory.strategies),
    )


def _built_in(kind: StrategyKind, name: str, template: str) -> StrategyConfig:
    return StrategyConfig(
        strategy_id=f"{name}-cairn00000",
        name=name,
        kind=kind,
        namespace_template=template,
        created_at=_EPOCH,
        updated_at=_EPOCH,
    )


# The strategies of a memory that has no stored configuration (the embedded default memory,
# used by the `cairn` command and the demo): facts and preferences per actor, a summary per
# session. Their namespaces match what `cairn remember` files by hand.
EMBEDDED_STRATEGIES: tuple[StrategyConfig, ...] = (
    _built_in(StrategyKind.SEMANTIC, "facts", "/facts/{actorId}/"),
    _built_in(StrategyKind.USER_PREFERENCE, "preferences", "/preferences/{actorId}/"),
    _built_in(StrategyKind.SUMMARY, "summaries", "/summaries/{actorId}/{sessionId}/"),
)


def embedded_memory(memory_id: str) -> MemoryConfig:
    """The configuration of a memory nobody created (``cairn`` on a laptop): the built-in
    strategies under ``BUILT_IN_TRIGGERS``.

    """
    return MemoryConfig(
        memory_id=memory_id,
        arn=f"arn:aws:bedrock-agentcore:local:000000000000:memory/{memory_id}",
        name="embedded",
        description=None,
        event_expiry_days=3650,
        created_at=_EPOCH,
        updated_at=_EPOCH,
        strategies=EMBEDDED_STRATEGIES,
        execution_role_arn=None,
        indexed_keys=(),
        namespace_keys=(),
        revision=1,
    )
