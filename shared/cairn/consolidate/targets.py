"""Where consolidation files what it adds: the memory's own fact and preference namespaces."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.errors import InvalidInputError
from cairn.extract.strategies import resolve_namespace
from cairn.memories import MemoryConfig, StrategyKind


@dataclass(frozen=True, slots=True)
class NamespaceTargets:
    """The namespace (and strategy slug) of an added fact, and of an added preference."""

    facts: str
    preferences: str
    facts_strategy: str = StrategyKind.SEMANTIC.value
    preferences_strategy: str = StrategyKind.USER_PREFERENCE.value

    def for_category(self, category: str) -> tuple[str, str]:
        """(namespace, strategy) of a new record of ``category``."""
        if category == "preference":
            return self.preferences, self.preferences_strategy
        return self.facts, self.facts_strategy


def default_targets(actor_id: str) -> NamespaceTargets:
    """The built-in strategies' namespaces (DESIGN §2): ``/facts/<actor>/`` and
    ``/preferences/<actor>/``."""
    return NamespaceTargets(facts=f"/facts/{actor_id}/", preferences=f"/preferences/{actor_id}/")


def targets_for(memory: MemoryConfig, *, actor_id: str, session_id: str) -> NamespaceTargets:
    """The memory's semantic and user-preference namespaces for this actor (and the session
    of the newest evidence, for templates that name it); a kind the memory lacks falls back
    to the other, and a memory with neither to ``default_targets``."""
    found: dict[StrategyKind, str] = {}
    for strategy in memory.strategies:
        if strategy.kind not in (StrategyKind.SEMANTIC, StrategyKind.USER_PREFERENCE):
            continue
        if strategy.self_managed is not None or strategy.kind in found:
            continue
        try:
            found[strategy.kind] = resolve_namespace(
                strategy, actor_id=actor_id, session_id=session_id
            )
        except InvalidInputError:
            continue  # a template consolidation cannot fill; the other kind or the default
    default = default_targets(actor_id)
    facts = found.get(StrategyKind.SEMANTIC)
    preferences = found.get(StrategyKind.USER_PREFERENCE)
    if facts is None and preferences is None:
        return default
    return NamespaceTargets(
        facts=facts or preferences or default.facts,
        preferences=preferences or facts or default.preferences,
        facts_strategy=(StrategyKind.SEMANTIC if facts else StrategyKind.USER_PREFERENCE).value,
        preferences_strategy=(
            StrategyKind.USER_PREFERENCE if preferences else StrategyKind.SEMANTIC
        ).value,
    )
