"""Fixtures for the optional API-state capabilities: each skips, with a reason, on a backend
that lacks it, so the lead can see which backends still owe an implementation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn.memories import MemoryConfig, StrategyConfig, StrategyKind, memory_arn
from cairn.ports import IdempotencyStore, MemoryConfigStore, RecordDirectory, Stores

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def require_memories(stores: Stores, backend_name: str) -> MemoryConfigStore:
    if stores.memories is None:
        pytest.skip(f"backend {backend_name!r} has no MemoryConfigStore (capability missing)")
    return stores.memories


def require_idempotency(stores: Stores, backend_name: str) -> IdempotencyStore:
    if stores.idempotency is None:
        pytest.skip(f"backend {backend_name!r} has no IdempotencyStore (capability missing)")
    return stores.idempotency


def require_directory(stores: Stores, backend_name: str) -> RecordDirectory:
    if stores.directory is None:
        pytest.skip(f"backend {backend_name!r} has no RecordDirectory (capability missing)")
    return stores.directory


def memory(name: str = "support", suffix: str = "AbCdEf1234", **changes: object) -> MemoryConfig:
    memory_id = f"{name}-{suffix}"
    strategy = StrategyConfig(
        strategy_id=f"facts-{suffix}",
        name="facts",
        kind=StrategyKind.SEMANTIC,
        namespace_template="/strategies/{memoryStrategyId}/actors/{actorId}/",
        created_at=T0,
        updated_at=T0,
    )
    values: dict[str, object] = {
        "memory_id": memory_id,
        "arn": memory_arn("us-east-1", "000000000000", memory_id),
        "name": name,
        "event_expiry_days": 90,
        "created_at": T0,
        "updated_at": T0,
        "strategies": (strategy,),
        **changes,
    }
    return MemoryConfig.model_validate(values)
