"""The last check before a model sees records: every one must belong to the scope at hand.

A backend that returns a row of another scope (a bug, a corrupted index, a hostile store) must
not put it in a prompt. Every path that builds a model prompt from records passes them through
``in_scope`` first: a foreign row is dropped, and the drop is counted and logged by where it
happened, with the scope and the count, never the content or the foreign ids.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from cairn.models import RecordVersion, Scope

logger = logging.getLogger(__name__)


def in_scope(versions: Iterable[RecordVersion], scope: Scope, *, where: str) -> list[RecordVersion]:
    """The versions of ``scope``, in order; any other is dropped and the drop logged."""
    kept: list[RecordVersion] = []
    foreign = 0
    for version in versions:
        if version.memory_id == scope.memory_id and version.actor_id == scope.actor_id:
            kept.append(version)
        else:
            foreign += 1
    if foreign:
        logger.warning(
            "cairn: scope violation: the store returned %d record(s) of another scope to %s "
            "for scope %s; they were dropped before any model saw them",
            foreign,
            where,
            scope,
        )
    return kept
