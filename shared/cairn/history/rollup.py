"""The rollup job: summarise a session's complete batches into the pyramid, through the model.

``roll_up_session`` reads the session's chunks and the turns after them, asks the model for
each complete batch (``cairn.history.pyramid`` plans, ``cairn.history.prompts`` asks), and
stores each chunk as soon as it is written, level 1 first and then upward, so a crash loses at
most the chunk being summarised and a rerun continues where it stopped. A chunk already stored
is never asked for again, and a put of the same chunk twice stores it once.

It never raises for the model or a concurrent writer: a refused answer, a model that is
unavailable or a level that moved under it ends the pass with a ``skipped`` reason in the
report (no content in it), and the next run tries again. At most ``max_calls`` model calls a
pass, so a long backlog is worked off over several runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from cairn.chunks import Chunk
from cairn.errors import ChunkConflictError, ModelError
from cairn.history import prompts
from cairn.history.pyramid import FANOUT, chunk_batches, level_one_chunk, parent_chunk, turn_batches
from cairn.history.turns import turns_after
from cairn.llm.structured import ask_structured
from cairn.model_request import NO_USAGE, ModelRequest, ModelUsage
from cairn.models import Scope
from cairn.ports import ChunkStore, Clock, EventStore, ModelProvider

log = logging.getLogger(__name__)

DEFAULT_MAX_CALLS = 40
# Why a session was not rolled up in a run that has a time limit: it waits for the next run.
OUT_OF_TIME = "the run's time ran out; the next run continues"


@dataclass
class RollupReport:
    """What one pass over a session did: chunks written per level, and why it stopped early."""

    session_id: str
    written: dict[int, int] = field(default_factory=dict)
    skipped: str | None = None
    usage: ModelUsage = NO_USAGE

    @property
    def chunks(self) -> int:
        return sum(self.written.values())


class _StopPassError(Exception):
    """Ends a pass early; its message is the report's ``skipped`` reason."""


def roll_up_session(
    events: EventStore,
    chunks: ChunkStore,
    model: ModelProvider,
    scope: Scope,
    session_id: str,
    *,
    clock: Clock,
    fanout: int = FANOUT,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> RollupReport:
    """Roll up every complete batch of the session that no chunk covers yet; see the module."""
    report = RollupReport(session_id=session_id)
    budget = [max_calls]

    def summarise(request: ModelRequest) -> str:
        if budget[0] <= 0:
            raise _StopPassError(
                f"reached {max_calls} model calls this pass; the next pass continues"
            )
        budget[0] -= 1
        try:
            answer = ask_structured(model, request, prompts.read_summary)
        except ModelError as exc:
            raise _StopPassError(
                f"the model failed ({type(exc).__name__}); the next pass retries"
            ) from exc
        report.usage += answer.usage
        if answer.value is None:
            raise _StopPassError(f"the model's summary was refused: {answer.reason}")
        return answer.value

    def store(chunk: Chunk) -> None:
        try:
            chunks.put(scope, chunk)
        except ChunkConflictError as exc:
            raise _StopPassError(
                "another rollup moved this session's pyramid; the next pass goes on"
            ) from exc
        report.written[chunk.level] = report.written.get(chunk.level, 0) + 1

    try:
        _roll(events, chunks, scope, session_id, clock, fanout, summarise, store)
    except _StopPassError as stop:
        report.skipped = str(stop)
        log.info("rollup of a session stopped early: %s", report.skipped)
    return report


def _roll(
    events: EventStore,
    chunks: ChunkStore,
    scope: Scope,
    session_id: str,
    clock: Clock,
    fanout: int,
    summarise: Callable[[ModelRequest], str],
    store: Callable[[Chunk], None],
) -> None:
    level_one = chunks.list_chunks(scope, session_id, level=1)
    turns = turns_after(events, scope, session_id, level_one[-1] if level_one else None)
    for batch in turn_batches(turns, fanout):
        store(level_one_chunk(scope, batch, summarise(prompts.for_turns(batch)), clock.now()))
    level = 1
    while True:
        below = chunks.list_chunks(scope, session_id, level=level)
        if len(below) < fanout:
            return
        above = chunks.list_chunks(scope, session_id, level=level + 1)
        for children in chunk_batches(below, above, fanout):
            store(parent_chunk(children, summarise(prompts.for_chunks(children)), clock.now()))
        level += 1


def roll_up_scope(
    events: EventStore,
    chunks: ChunkStore,
    model: ModelProvider,
    scope: Scope,
    *,
    clock: Clock,
    fanout: int = FANOUT,
    max_calls: int = DEFAULT_MAX_CALLS,
    until: datetime | None = None,
) -> list[RollupReport]:
    """``roll_up_session`` for every session of the actor, in session id order; a session not
    started by ``until`` (by ``clock``) is reported skipped with ``OUT_OF_TIME``."""
    reports = []
    cursor: str | None = None
    while True:
        page = events.list_sessions(scope, cursor=cursor)
        for session in page.items:
            if until is not None and clock.now() >= until:
                reports.append(RollupReport(session.session_id, skipped=OUT_OF_TIME))
                continue
            reports.append(
                roll_up_session(
                    events,
                    chunks,
                    model,
                    scope,
                    session.session_id,
                    clock=clock,
                    fanout=fanout,
                    max_calls=max_calls,
                )
            )
        if page.next_cursor is None:
            return reports
        cursor = page.next_cursor
