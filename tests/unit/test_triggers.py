"""Trigger policies and the pure counting every rollout store runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from cairn.extract.triggers import (
    BUILT_IN_HISTORY_WINDOW,
    BUILT_IN_TRIGGERS,
    IN_PROCESS_TRIGGERS,
    embedded_memory,
    policy_for,
)
from cairn.memories import (
    MemoryConfig,
    SelfManagedConfig,
    StrategyConfig,
    StrategyKind,
    TriggerConditions,
)
from cairn.models import BlobPayload, Conversational, Event, Role
from cairn.rollout.index import (
    MAX_BATCH_EVENTS,
    SessionCounters,
    TriggerPolicy,
    claim_idle_session,
    count_append,
    estimate_tokens,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def strategy(
    name: str, kind: StrategyKind, managed: SelfManagedConfig | None = None
) -> StrategyConfig:
    return StrategyConfig(
        strategy_id=f"{name}-AbCdEf1234",
        name=name,
        kind=kind,
        namespace_template="/strategies/{memoryStrategyId}/actors/{actorId}/",
        self_managed=managed,
        created_at=T0,
        updated_at=T0,
    )


def memory(*strategies: StrategyConfig) -> MemoryConfig:
    return MemoryConfig(
        memory_id="support-AbCdEf1234",
        arn="arn:aws:bedrock-agentcore:us-east-1:000000000000:memory/support-AbCdEf1234",
        name="support",
        event_expiry_days=30,
        created_at=T0,
        updated_at=T0,
        strategies=strategies,
    )


def test_built_in_strategies_run_under_the_documented_defaults() -> None:
    policy = policy_for(memory(strategy("facts", StrategyKind.SEMANTIC)))

    assert policy is not None
    assert policy.message_count == BUILT_IN_TRIGGERS.message_count == 6
    assert policy.idle_timeout_seconds == 600
    assert policy.history_window == BUILT_IN_HISTORY_WINDOW == 4


def test_the_most_eager_condition_of_any_strategy_wins() -> None:
    managed = SelfManagedConfig(
        triggers=TriggerConditions(message_count=20, idle_session_timeout_seconds=30),
        topic_arn="arn:aws:sns:us-east-1:000000000000:mine.fifo",
        payload_bucket="my-bucket",
        historical_context_window_size=10,
    )
    policy = policy_for(
        memory(
            strategy("facts", StrategyKind.SEMANTIC), strategy("own", StrategyKind.CUSTOM, managed)
        )
    )

    assert policy is not None
    assert (policy.message_count, policy.idle_timeout_seconds, policy.history_window) == (6, 30, 10)
    assert policy.strategy_ids == ("facts-AbCdEf1234", "own-AbCdEf1234")


def test_in_process_built_in_strategies_extract_each_exchange_but_a_strategy_keeps_its_own() -> (
    None
):
    managed = SelfManagedConfig(
        triggers=TriggerConditions(message_count=20),
        topic_arn="arn:aws:sns:us-east-1:000000000000:mine.fifo",
        payload_bucket="my-bucket",
        historical_context_window_size=0,
    )
    built_in = policy_for(memory(strategy("facts", StrategyKind.SEMANTIC)), IN_PROCESS_TRIGGERS)
    own = policy_for(memory(strategy("own", StrategyKind.CUSTOM, managed)), IN_PROCESS_TRIGGERS)

    assert built_in is not None
    assert (built_in.message_count, built_in.idle_timeout_seconds) == (2, 10)
    assert own is not None
    assert (own.message_count, own.idle_timeout_seconds) == (20, None)


def test_a_memory_without_strategies_is_never_counted() -> None:
    assert policy_for(memory()) is None


def test_the_embedded_memory_uses_the_built_in_strategies() -> None:
    found = embedded_memory("default")

    assert found.memory_id == "default"
    assert {s.kind for s in found.strategies} == {
        StrategyKind.SEMANTIC,
        StrategyKind.USER_PREFERENCE,
        StrategyKind.SUMMARY,
    }


def test_tokens_are_estimated_from_utf8_bytes() -> None:
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("ééé") == 2  # six bytes


def _event(n: int, messages: int) -> Event:
    payload: tuple[Conversational | BlobPayload, ...] = tuple(
        Conversational(role=Role.USER, text=f"message {n}.{i}") for i in range(messages)
    ) or (BlobPayload(blob=n),)
    return Event(
        session_id="s1",
        event_timestamp=T0 + timedelta(seconds=n),
        payload=payload,
        memory_id="m1",
        actor_id="a1",
        event_id=f"{n}#{n:08x}",
        created_at=T0 + timedelta(seconds=n),
    )


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=60),
    every=st.integers(min_value=1, max_value=7),
    idle_at=st.integers(min_value=0, max_value=60),
)
def test_every_event_with_a_message_lands_in_exactly_one_rollout(
    sizes: list[int], every: int, idle_at: int
) -> None:
    policy = TriggerPolicy(message_count=every, idle_timeout_seconds=10, strategy_ids=("s",))
    counters: SessionCounters | None = None
    claims = []
    for n, size in enumerate(sizes):
        counted = count_append(counters, _event(n, size), policy)
        if counted is None:
            assert size == 0
            continue
        counters, claim = counted
        if claim is not None:
            claims.append(claim)
            assert sum(sizes[int(r.event_id.split("#")[0])] for r in claim.events) >= every
        if n == idle_at and counters.pending:
            idle = claim_idle_session(counters, T0 + timedelta(days=1))
            assert idle is not None
            counters, swept = idle
            claims.append(swept)
    if counters is not None and counters.pending:
        final = claim_idle_session(counters, T0 + timedelta(days=1))
        assert final is not None
        claims.append(final[1])

    released = [r.event_id for c in claims for r in c.events]
    with_messages = [_event(n, s).event_id for n, s in enumerate(sizes) if s]
    assert sorted(released) == sorted(with_messages)
    assert all(len(c.events) <= MAX_BATCH_EVENTS for c in claims)


def test_an_idle_claim_waits_for_the_timeout() -> None:
    policy = TriggerPolicy(idle_timeout_seconds=60, strategy_ids=("s",))
    counted = count_append(None, _event(1, 1), policy)
    assert counted is not None
    counters, _ = counted

    assert claim_idle_session(counters, T0 + timedelta(seconds=60)) is None
    assert claim_idle_session(counters, T0 + timedelta(seconds=61)) is not None
