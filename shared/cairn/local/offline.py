"""The offline model: the heuristic provider given every feature's rules.

``offline_model()`` is what the embedded system, ``cairn serve`` and ``cairn demo`` use when no
model is configured: ``cairn.llm.heuristic.HeuristicModel`` with extraction's and formation's
responders (``cairn.extract.heuristic``) and consolidation's (``cairn.consolidate.heuristic``).
No model, no download, no network.
"""

from __future__ import annotations

from cairn.consolidate.heuristic import CONSOLIDATION_RESPONDERS
from cairn.extract.heuristic import EXTRACTION_RESPONDERS
from cairn.llm.heuristic import HeuristicModel


def offline_model() -> HeuristicModel:
    """The offline heuristic provider answering extraction, formation and consolidation."""
    return HeuristicModel({**EXTRACTION_RESPONDERS, **CONSOLIDATION_RESPONDERS})
