"""An episodic strategy's reflection configuration on the wire
(``EpisodicReflectionConfigurationInput``), checked as cairn files reflections
(``cairn.memories.reflection_template_problem``)."""

from __future__ import annotations

from typing import Any

from cairn.api.errors import ApiError
from cairn.memories import reflection_template_problem

EPISODIC_SCHEMA_WHY = "episodes and reflections carry no typed metadata yet"


def reflection_template_from_wire(
    spec: dict[str, Any], field: str, episodes: str, template: str | None
) -> str:
    """The reflection namespace template (``template``, read from the strategy's
    ``reflectionConfiguration`` ``spec``): required, as the service requires it, and checked
    against the episodic template (``reflection_template_problem``)."""
    if spec.get("memoryRecordSchema") is not None:
        where = f"{field}.memoryRecordSchema"
        raise ApiError.validation(
            f"{where} is not supported by cairn: {EPISODIC_SCHEMA_WHY}", field=where
        )
    if template is None:
        raise ApiError.validation(
            f"{field}.namespaceTemplates is required for an episodic strategy: give the "
            "namespace template its reflections go to, e.g. "
            "/strategies/{memoryStrategyId}/actors/{actorId}/",
            field=f"{field}.namespaceTemplates",
        )
    problem = reflection_template_problem(episodes, template)
    if problem is not None:
        raise ApiError.validation(f"{field}.namespaceTemplates: {problem}", field=field)
    return template
