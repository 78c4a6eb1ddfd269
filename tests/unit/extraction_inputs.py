"""Builders for extraction tests: a memory with strategies, rollout messages and payloads."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from cairn.memories import MemoryConfig, StrategyConfig, StrategyKind
from cairn.models import Role
from cairn.rollout.payload import RolloutMessage, RolloutPayload, text_sha256

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MEMORY_ID = "support-AbCdEf1234"
ACTOR = "tg:12345"
SESSION = "chat-1"
FACTS = "facts-AbCdEf1234"
PREFS = "prefs-AbCdEf1234"
SUMMARY = "summary-AbCdEf1234"

_TEMPLATES = {
    FACTS: (StrategyKind.SEMANTIC, "/facts/{actorId}/"),
    PREFS: (StrategyKind.USER_PREFERENCE, "/preferences/{actorId}/"),
    SUMMARY: (StrategyKind.SUMMARY, "/summaries/{actorId}/{sessionId}/"),
}


def strategy(
    strategy_id: str,
    kind: StrategyKind,
    template: str,
    **extra: Any,
) -> StrategyConfig:
    return StrategyConfig(
        strategy_id=strategy_id,
        name=strategy_id.split("-")[0],
        kind=kind,
        namespace_template=template,
        created_at=T0,
        updated_at=T0,
        **extra,
    )


def memory(*strategies: StrategyConfig) -> MemoryConfig:
    """The support memory; by default with facts, preferences and session summaries."""
    chosen = strategies or tuple(
        strategy(sid, kind, template) for sid, (kind, template) in _TEMPLATES.items()
    )
    return MemoryConfig(
        memory_id=MEMORY_ID,
        arn=f"arn:aws:bedrock-agentcore:us-east-1:123456789012:memory/{MEMORY_ID}",
        name="support",
        event_expiry_days=30,
        created_at=T0,
        updated_at=T0,
        strategies=chosen,
    )


def message(number: int, text: str, role: Role = Role.USER) -> RolloutMessage:
    """The ``number``-th message of the session, a minute after the previous one."""
    at = T0 + timedelta(minutes=number)
    return RolloutMessage(
        event_id=f"{int(at.timestamp() * 1000)}#{number:016x}",
        index=0,
        event_timestamp=at,
        role=role,
        text=text,
        sha256=text_sha256(text),
    )


def rollout(
    *messages: RolloutMessage,
    rollout_id: str = "ro-1",
    session_id: str = SESSION,
    strategy_ids: tuple[str, ...] = (FACTS, PREFS, SUMMARY),
    history: tuple[RolloutMessage, ...] = (),
) -> RolloutPayload:
    return RolloutPayload(
        rollout_id=rollout_id,
        memory_id=MEMORY_ID,
        actor_id=ACTOR,
        session_id=session_id,
        strategy_ids=strategy_ids,
        trigger="message_count",
        events=messages,
        history=history,
        created_at=T0 + timedelta(hours=1),
    )


def candidates(*items: tuple[str, list[int]], category: str = "fact") -> str:
    """A model's extraction answer: one candidate per (content, evidence aliases)."""
    return json.dumps(
        {
            "candidates": [
                {"content": content, "category": category, "confidence": 0.95, "evidence": cited}
                for content, cited in items
            ]
        }
    )


NOTHING = json.dumps({"candidates": []})


def decisions(*items: dict[str, Any]) -> str:
    return json.dumps({"decisions": list(items)})
