"""The boot window over the AgentCore wire: a session's newest turns, read through ListEvents.

The wire API has events and records, and nothing that holds the history pyramid: chunks are
not exposed over HTTP (a reserved records namespace would surface them in
RetrieveMemoryRecords answers and in every client's ListMemoryRecords of the memory). So a
session over HTTP (``MemorySession.agentcore``) gets the window of turns only: the newest
turns verbatim within the budget, and a note of which older turns are beyond it, the same
window ``cairn.history.boot_window.plan_window`` plans for a session with no chunks, line for
line (the local window of an un-rolled session is byte-identical).

ListEvents answers newest first, page by page. The turns are read from the newest until one
more would not fit; the older pages are then only counted (the wire has no count of a
session's turns, and only a payload says whether an event is a turn), so a turn's number is
the one the pyramid gives it. A turn is a main-branch event that carries conversation text,
exactly as ``cairn.history.turns`` says.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from cairn.history.boot_window import (
    CAVEAT,
    EMPTY_LINE,
    HEADING,
    BootWindow,
    plan_window,
    turn_item,
)
from cairn.history.turns import Turn
from cairn.models import Role, Scope
from cairn.rollout.index import estimate_tokens
from cairn.runtime.agentcore_wire import Call

PAGE_SIZE = 100  # the most ListEvents gives in one page


def read_wire_window(
    client: Any, call: Call, scope: Scope, session_id: str, budget_tokens: int
) -> BootWindow:
    """The session's boot window of turns, read through ``client.list_events`` (newest first,
    paged): the turns that fit, then only a count of the older ones."""
    room = max(0, budget_tokens - estimate_tokens("\n".join([HEADING, CAVEAT, EMPTY_LINE])))
    newest: list[tuple[str, datetime, tuple[tuple[Role, str], ...]]] = []
    spent, older = 0, 0
    for event_id, at, lines in _turns_newest_first(client, call, scope, session_id):
        if spent > room:
            older += 1  # beyond the window: only its number matters
            continue
        newest.append((event_id, at, lines))
        # Costed as turn 0: a real number is longer, so the kept turns cost at least this,
        # and the oldest kept one is dropped by the plan whenever it does not fit.
        spent += turn_item(Turn(0, event_id, session_id, at, lines)).tokens
    newest.reverse()
    turns = [
        Turn(older + i + 1, event_id, session_id, at, lines)
        for i, (event_id, at, lines) in enumerate(newest)
    ]
    return plan_window([], turns, {}, budget_tokens)


def _turns_newest_first(
    client: Any, call: Call, scope: Scope, session_id: str
) -> Iterator[tuple[str, datetime, tuple[tuple[Role, str], ...]]]:
    token: str | None = None
    while True:
        page = call(
            client.list_events,
            memoryId=scope.memory_id,
            actorId=scope.actor_id,
            sessionId=session_id,
            includePayloads=True,
            maxResults=PAGE_SIZE,
            **({"nextToken": token} if token else {}),
        )
        for event in page.get("events", ()):
            if event.get("branch"):
                continue  # an alternative timeline, not the conversation's turns
            lines = _lines(event.get("payload") or ())
            if lines:
                at: datetime = event["eventTimestamp"]
                yield event["eventId"], at.astimezone(UTC), lines
        token = page.get("nextToken")
        if not token:
            return


def _lines(payload: Any) -> tuple[tuple[Role, str], ...]:
    found: list[tuple[Role, str]] = []
    for item in payload:
        said = item.get("conversational")
        if said is not None:
            found.append((Role(said["role"]), said["content"]["text"]))
    return tuple(found)
