"""Short-term memory: CreateEvent, GetEvent, DeleteEvent, ListEvents, IngestData.

ListEvents answers newest first (the order AgentCore clients rely on: Strands reverses the
list, and reads ``events[0]`` as the latest state, reference §2), with branch and metadata
filters applied here over the session's events.

CreateEvent and IngestData append through the extraction pipeline when the context has one
(``RolloutPipeline.append``): the event is counted toward the memory's triggers in the same
transaction that stores it, and a rollout that fires is staged and announced, exactly as a
library append (docs/extraction.md). ``extractionMode: SKIP`` stores the event uncounted.
"""

from __future__ import annotations

import uuid
from typing import Any

from cairn.api.codec import event_input_from_wire, event_to_wire
from cairn.api.context import ApiContext
from cairn.api.errors import ApiError
from cairn.api.filters import check_filters, matches
from cairn.api.idempotency import Outcome, append_key, as_stored, replay_stored, run_once
from cairn.api.operations.assembled_pages import DEFAULT_MAX_RESULTS, page_of
from cairn.api.operations.placement import caller_scope
from cairn.errors import EventNotFoundError
from cairn.extract.triggers import policy_for
from cairn.memories import MemoryConfig
from cairn.models import Event, EventInput, Scope
from cairn.paging import event_sort_key
from cairn.ports import MAX_PAGE_SIZE, EventStore

MAIN_BRANCH = "main"
SKIP_EXTRACTION = "SKIP"
# A client re-stamps the time on each attempt (the SDK's Strands memory store does), so the
# timestamp does not tell a retry from another request: see cairn.api.idempotency.
RESTAMPED_ON_RETRY = frozenset({"eventTimestamp"})


def append_event(
    ctx: ApiContext,
    memory: MemoryConfig,
    scope: Scope,
    event: EventInput,
    params: dict[str, Any],
    *,
    operation: str,
    not_identifying: frozenset[str] = frozenset(),
) -> Event:
    """Store ``event``, counted toward the memory's triggers when the context runs extraction
    (and the caller did not ask to skip it). A retry of the same request (same ``clientToken``)
    gets the event the first one stored, even if nobody could tell whether that one landed."""
    key = append_key(memory.memory_id, operation, params, not_identifying)
    if ctx.extraction is None:
        return ctx.events.append(scope, event, idempotency_key=key, deletion_fence=True)
    skipped = params.get("extractionMode") == SKIP_EXTRACTION
    policy = None if skipped else policy_for(memory, ctx.settings.built_in_triggers)
    appended = ctx.extraction.append(scope, event, policy, idempotency_key=key, deletion_fence=True)
    return appended.event


def _append_once(
    ctx: ApiContext,
    memory: MemoryConfig,
    params: dict[str, Any],
    scope: Scope,
    event: EventInput,
) -> dict[str, Any]:
    def execute() -> Outcome:
        stored = append_event(
            ctx,
            memory,
            scope,
            event,
            params,
            operation="CreateEvent",
            not_identifying=RESTAMPED_ON_RETRY,
        )
        return Outcome(
            response={"event": event_to_wire(stored)},
            # The event itself carries content: the claim keeps where it is, not what it says.
            reference={
                "actorId": scope.actor_id,
                "sessionId": stored.session_id,
                "eventId": stored.event_id,
            },
        )

    def replay(reference: dict[str, Any]) -> dict[str, Any]:
        try:
            stored = ctx.events.get_event(scope, reference["sessionId"], reference["eventId"])
        except EventNotFoundError:
            raise ApiError.not_found(
                "the event created under this clientToken has been deleted since"
            ) from None
        return {"event": event_to_wire(stored)}

    return run_once(
        ctx,
        scope=scope.memory_id,
        operation="CreateEvent",
        params=params,
        execute=execute,
        replay=replay,
        not_identifying=RESTAMPED_ON_RETRY,
        keyed=True,
    )


def create_event(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.memory(params["memoryId"])
    # sessionId is optional in the model; like IngestData, a missing one is generated.
    session_id = params.get("sessionId") or str(uuid.uuid4())
    scope = caller_scope(memory, params["actorId"], session_id=session_id)
    event = event_input_from_wire(params, session_id=session_id)
    root = event.branch.root_event_id if event.branch else None
    if root is not None:
        try:
            ctx.events.get_event(scope, session_id, root)
        except EventNotFoundError:
            raise ApiError.not_found(
                f"the branch's rootEventId {root!r} is not an event of this session"
            ) from None
    return _append_once(ctx, memory, params, scope, event)


def ingest_data(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """Stores the inline payload as one event of the session (generated when absent)."""
    memory = ctx.memory(params["memoryId"])
    session_id = params.get("sessionId") or str(uuid.uuid4())
    scope = caller_scope(memory, params["actorId"], session_id=session_id)
    body = {
        "payload": params["source"]["inline"]["payload"],
        "contentTimestamp": params["contentTimestamp"],
        "metadata": params.get("metadata"),
    }
    event = event_input_from_wire(body, session_id=session_id, timestamp_key="contentTimestamp")

    def execute() -> Outcome:
        append_event(ctx, memory, scope, event, params, operation="IngestData")
        return as_stored({"sessionId": session_id})

    return run_once(
        ctx,
        scope=memory.memory_id,
        operation="IngestData",
        params=params,
        execute=execute,
        replay=replay_stored,
        keyed=True,
    )


def _event_scope(ctx: ApiContext, params: dict[str, Any]) -> Scope:
    return caller_scope(ctx.memory(params["memoryId"]), params["actorId"])


def get_event(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    scope = _event_scope(ctx, params)
    event = ctx.events.get_event(scope, params["sessionId"], params["eventId"])
    return {"event": event_to_wire(event)}


def delete_event(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    scope = _event_scope(ctx, params)
    ctx.events.delete_event(scope, params["sessionId"], params["eventId"])
    return {"eventId": params["eventId"]}


def session_events(events: EventStore, scope: Scope, session_id: str) -> list[Event]:
    """Every event of the session, oldest first (all pages)."""
    found: list[Event] = []
    cursor: str | None = None
    while True:
        page = events.list_events(scope, session_id, limit=MAX_PAGE_SIZE, cursor=cursor)
        found.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return found


def _branch_name(event: Event) -> str:
    return event.branch.name if event.branch is not None else MAIN_BRANCH


def _on_branch(
    events: list[Event], name: str, include_parents: bool, seen: frozenset[str] = frozenset()
) -> list[Event]:
    """The branch's events; with its parents, also each parent's events up to the fork.

    The parent is the branch of the first root event the branch names; ``seen`` stops at a
    branch already visited (roots can be named so that two branches fork from each other).
    """
    own = [e for e in events if _branch_name(e) == name]
    roots = [e.branch.root_event_id for e in own if e.branch and e.branch.root_event_id]
    if not include_parents or not roots:
        return own
    root = next((e for e in events if e.event_id == roots[0]), None)
    if root is None or _branch_name(root) in seen | {name}:
        return own
    parent_view = _on_branch(events, _branch_name(root), include_parents, seen | {name})
    cut = event_sort_key(root.event_timestamp, root.event_id)
    inherited = [e for e in parent_view if event_sort_key(e.event_timestamp, e.event_id) <= cut]
    return sorted([*inherited, *own], key=lambda e: event_sort_key(e.event_timestamp, e.event_id))


def list_events(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    scope = _event_scope(ctx, params)
    chosen = params.get("filter") or {}
    metadata_filters = chosen.get("eventMetadata") or []
    check_filters(metadata_filters, "filter.eventMetadata")
    events = session_events(ctx.events, scope, params["sessionId"])
    branch = chosen.get("branch")
    if branch is not None:
        events = _on_branch(events, branch["name"], bool(branch.get("includeParentBranches")))
    events = [
        e
        for e in events
        if matches({k: {"stringValue": v} for k, v in e.metadata.items()}, metadata_filters)
    ]
    events.reverse()
    include = params.get("includePayloads", True)
    query = {"session": params["sessionId"], "filter": chosen, "include": include}
    page, next_token = page_of(
        events,
        scope_key=str(scope),
        query=query,
        position=lambda e: event_sort_key(e.event_timestamp, e.event_id),
        descending=True,
        limit=params.get("maxResults") or DEFAULT_MAX_RESULTS,
        token=params.get("nextToken"),
    )
    answer: dict[str, Any] = {"events": [event_to_wire(e, include_payloads=include) for e in page]}
    if next_token is not None:
        answer["nextToken"] = next_token
    return answer
