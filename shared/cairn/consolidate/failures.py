"""Secondary failures of consolidation, reported to the host and never to the agent.

Staging a run's evidence and running a pass happen after the agent answered; their failures
must not fail that answer. A host that wants to hear of them passes ``on_consolidation_error``
(a ``MemorySession``, a ``ConsolidationWorker``); each failure arrives as a
``ConsolidationFailure``: where, which error, whether it may pass by itself, and the error's
message (cairn's messages never hold memory content).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cairn.models import Scope

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ConsolidationFailure:
    """One secondary failure: the scope, the stage (staging a run's evidence, or a pass), the
    error class (or the pass outcome), whether retrying may help, and the message."""

    scope: Scope
    stage: Literal["stage", "pass"]
    error: str
    retryable: bool
    message: str


ErrorCallback = Callable[[ConsolidationFailure], None]


def report(on_error: ErrorCallback | None, failure: ConsolidationFailure) -> None:
    """Hand ``failure`` to the host's callback; a callback that raises is logged, not raised."""
    if on_error is None:
        return
    try:
        on_error(failure)
    except Exception as exc:
        log.warning("on_consolidation_error raised %s; ignored", type(exc).__name__)
