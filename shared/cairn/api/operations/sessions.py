"""ListActors and ListSessions: straight from the event store, with its own cursors."""

from __future__ import annotations

from typing import Any

from cairn.api.codec import to_epoch
from cairn.api.context import ApiContext
from cairn.api.guard import touches_actor
from cairn.api.operations.assembled_pages import DEFAULT_MAX_RESULTS
from cairn.api.operations.placement import caller_scope


def _with_token(answer: dict[str, Any], token: str | None) -> dict[str, Any]:
    if token is not None:
        answer["nextToken"] = token
    return answer


def list_actors(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """Actors with events in the memory, sorted by id; with principals, only the ones the
    request's principal may touch (pages read on until one holds any, or the last)."""
    memory = ctx.memory(params["memoryId"])
    cursor = params.get("nextToken")
    while True:
        page = ctx.events.list_actors(
            memory.memory_id,
            limit=params.get("maxResults") or DEFAULT_MAX_RESULTS,
            cursor=cursor,
        )
        actors = [actor for actor in page.items if touches_actor(ctx, actor)]
        cursor = page.next_cursor
        if actors or cursor is None:
            break
    answer = {"actorSummaries": [{"actorId": actor} for actor in actors]}
    return _with_token(answer, cursor)


def list_sessions(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """The actor's sessions, sorted by id; every one listed has events (HAS_EVENTS holds)."""
    scope = caller_scope(ctx.memory(params["memoryId"]), params["actorId"])
    page = ctx.events.list_sessions(
        scope,
        limit=params.get("maxResults") or DEFAULT_MAX_RESULTS,
        cursor=params.get("nextToken"),
    )
    summaries = [
        {"sessionId": s.session_id, "actorId": s.actor_id, "createdAt": to_epoch(s.created_at)}
        for s in page.items
    ]
    return _with_token({"sessionSummaries": summaries}, page.next_cursor)
