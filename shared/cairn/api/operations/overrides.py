"""A built-in strategy's prompt override on the wire (``customMemoryStrategy.configuration``'s
``semanticOverride``, ``summaryOverride``, ``userPreferenceOverride``, ``episodicOverride``)
in, and the ``StrategyConfiguration`` GetMemory answers with out. An episodic override's
reflection step names where its reflections go (read by ``cairn.api.operations.strategies``).
"""

from __future__ import annotations

from typing import Any

from cairn.memories import PromptOverride, StrategyConfig, StrategyKind

OVERRIDES = {
    "semanticOverride": StrategyKind.SEMANTIC,
    "summaryOverride": StrategyKind.SUMMARY,
    "userPreferenceOverride": StrategyKind.USER_PREFERENCE,
    "episodicOverride": StrategyKind.EPISODIC,
}
_OVERRIDE_TYPES = {
    StrategyKind.SEMANTIC: ("SEMANTIC_OVERRIDE", "semantic"),
    StrategyKind.SUMMARY: ("SUMMARY_OVERRIDE", "summary"),
    StrategyKind.USER_PREFERENCE: ("USER_PREFERENCE_OVERRIDE", "userPreference"),
    StrategyKind.EPISODIC: ("EPISODIC_OVERRIDE", "episodic"),
}


def override_from_wire(name: str, spec: dict[str, Any]) -> tuple[PromptOverride, str | None]:
    """The override ``configuration[name]`` describes, and the prompt extraction appends."""
    base = OVERRIDES[name]
    extraction = spec.get("extraction") or {}
    consolidation = spec.get("consolidation") or {}
    reflection = spec.get("reflection") or {}
    override = PromptOverride(
        base=base,
        extraction_model=extraction.get("modelId"),
        consolidation_prompt=consolidation.get("appendToPrompt"),
        consolidation_model=consolidation.get("modelId"),
        reflection_prompt=reflection.get("appendToPrompt"),
        reflection_model=reflection.get("modelId"),
    )
    # cairn writes a summary in its extraction call: the summary's consolidation prompt is
    # where the service lets an owner shape it, so it is added there.
    appended = extraction.get("appendToPrompt")
    if base is StrategyKind.SUMMARY:
        appended = consolidation.get("appendToPrompt")
    return override, appended


def override_to_wire(strategy: StrategyConfig) -> dict[str, Any]:
    """The ``StrategyConfiguration`` of an override, as given."""
    override = strategy.override
    assert override is not None
    kind, prefix = _OVERRIDE_TYPES[override.base]
    wire: dict[str, Any] = {"type": kind}
    extraction_prompt = strategy.extraction_prompt
    consolidation_prompt = override.consolidation_prompt
    if override.base is not StrategyKind.SUMMARY and override.extraction_model is not None:
        wire["extraction"] = {
            "customExtractionConfiguration": {
                f"{prefix}ExtractionOverride": {
                    "appendToPrompt": extraction_prompt,
                    "modelId": override.extraction_model,
                }
            }
        }
    if override.consolidation_model is not None:
        wire["consolidation"] = {
            "customConsolidationConfiguration": {
                f"{prefix}ConsolidationOverride": {
                    "appendToPrompt": consolidation_prompt,
                    "modelId": override.consolidation_model,
                }
            }
        }
    if override.reflection_model is not None and strategy.reflection_template is not None:
        templates = [strategy.reflection_template]
        wire["reflection"] = {
            "customReflectionConfiguration": {
                "episodicReflectionOverride": {
                    "appendToPrompt": override.reflection_prompt,
                    "modelId": override.reflection_model,
                    "namespaces": templates,
                    "namespaceTemplates": templates,
                }
            }
        }
    return wire
