"""The offline model: the heuristic provider given every feature's rules.

``offline_model()`` is what the embedded system, ``cairn serve`` and ``cairn demo`` use when no
model is configured: ``cairn.llm.heuristic.HeuristicModel`` with extraction's and formation's
responders (``cairn.extract.offline_rules``), the episodic strategy's
(``cairn.extract.offline_episodes``), consolidation's
(``cairn.consolidate.offline_rules``), the history rollup's
(``cairn.history.offline_rules``), link generation's (``cairn.history.link_prompts``:
same-entity ``relates_to`` only), evolution's (``cairn.history.evolution_prompts``: the
neighbours' tags and a context line naming them, or a decline) and reflection's
(``cairn.history.reflection_prompts``: an extractive insight over a shared term;
``cairn.extract.offline_contradictions``: one attribute set to two values). No model, no
download, no network.
"""

from __future__ import annotations

from cairn.consolidate.offline_rules import CONSOLIDATION_RESPONDERS
from cairn.extract.offline_contradictions import CONTRADICTION_RESPONDERS
from cairn.extract.offline_episodes import EPISODIC_RESPONDERS
from cairn.extract.offline_rules import EXTRACTION_RESPONDERS
from cairn.history.evolution_prompts import EVOLUTION_RESPONDERS
from cairn.history.link_prompts import LINK_RESPONDERS
from cairn.history.offline_rules import ROLLUP_RESPONDERS
from cairn.history.reflection_prompts import REFLECTION_RESPONDERS
from cairn.llm.heuristic import HeuristicModel


def offline_model() -> HeuristicModel:
    """The offline heuristic provider answering extraction, formation, consolidation, the
    history rollup, link generation, evolution and reflection."""
    return HeuristicModel(
        {
            **EXTRACTION_RESPONDERS,
            **EPISODIC_RESPONDERS,
            **CONSOLIDATION_RESPONDERS,
            **ROLLUP_RESPONDERS,
            **LINK_RESPONDERS,
            **REFLECTION_RESPONDERS,
            **CONTRADICTION_RESPONDERS,
            **EVOLUTION_RESPONDERS,
        }
    )
