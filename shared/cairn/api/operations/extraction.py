"""StartMemoryExtractionJob and ListMemoryExtractionJobs: failed rollouts, and retrying one.

AgentCore lists the extraction jobs that *failed*, and StartMemoryExtractionJob runs one of them
again. In cairn a job is a rollout (docs/extraction.md): the listed jobs are the memory's
rollouts in the ``failed`` state (``jobID`` is the rollout id, ``failureReason`` the reason kept
in the rollout index, ``messages`` the conversational messages of its events that still
exist), and starting one marks the rollout ``claimed`` again and releases it (stage, announce)
as if its trigger had just fired; if releasing fails, the sweep finishes it within a minute.

A context without an extraction pipeline runs no extraction: it lists no job and has none to
start. A rollout is for every strategy of its memory, so ``strategyId`` is given only when the
memory has one strategy or the filter names one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cairn.api.context import ApiContext, scope_of
from cairn.api.errors import ApiError
from cairn.api.guard import touches_actor
from cairn.api.idempotency import Outcome, as_stored, replay_stored, run_once
from cairn.api.operations.assembled_pages import DEFAULT_MAX_RESULTS, page_of
from cairn.errors import RolloutNotFoundError
from cairn.extract.staging import RolloutPipeline
from cairn.memories import MemoryConfig
from cairn.ports import MAX_PAGE_SIZE
from cairn.rollout.index import Rollout, RolloutState, messages_of, rollout_kind

FAILED = "FAILED"


def _actors(ctx: ApiContext, memory: MemoryConfig, only: str | None) -> Iterator[str]:
    """The memory's actors with events (a rollout's events make its actor listed) that the
    request's principal may touch; a filter naming another actor finds none."""
    if only is not None:
        if touches_actor(ctx, only):
            yield only
        return
    cursor: str | None = None
    while True:
        page = ctx.events.list_actors(memory.memory_id, limit=MAX_PAGE_SIZE, cursor=cursor)
        yield from (actor for actor in page.items if touches_actor(ctx, actor))
        cursor = page.next_cursor
        if cursor is None:
            return


def _is_failed_extraction(rollout: Rollout) -> bool:
    """A failed extraction rollout (a consolidation pass's evidence is no extraction job)."""
    return rollout.state is RolloutState.FAILED and rollout_kind(rollout.rollout_id) == "extraction"


def _failed(
    ctx: ApiContext, pipeline: RolloutPipeline, memory: MemoryConfig, chosen: dict[str, Any]
) -> list[Rollout]:
    """The memory's failed rollouts the filter lets through, by (actor, rollout id)."""
    found: list[Rollout] = []
    for actor in _actors(ctx, memory, chosen.get("actorId")):
        scope = scope_of(memory, actor)
        pending = pipeline.rollouts.list_pending(scope, limit=MAX_PAGE_SIZE, kind="extraction")
        found += [
            rollout
            for rollout in pending
            if _is_failed_extraction(rollout)
            and chosen.get("sessionId") in (None, rollout.session_id)
            and chosen.get("strategyId") in (None, *rollout.strategy_ids)
        ]
    return found


def _job(pipeline: RolloutPipeline, rollout: Rollout, strategy_id: str | None) -> dict[str, Any]:
    events = pipeline.rollouts.events_for(rollout.scope, rollout.session_id, rollout.events)
    messages = [
        {"eventId": event.event_id, "messageIndex": index}
        for event in events
        for index, _ in messages_of(event)
    ]
    job: dict[str, Any] = {
        "jobID": rollout.rollout_id,
        "messages": {"messagesList": messages},
        "status": FAILED,
        "failureReason": rollout.failure or "failed without a recorded reason",
        "sessionId": rollout.session_id,
        "actorId": rollout.actor_id,
    }
    single = rollout.strategy_ids[0] if len(rollout.strategy_ids) == 1 else None
    if strategy_id or single:
        job["strategyId"] = strategy_id or single
    return job


def list_memory_extraction_jobs(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """The memory's failed rollouts as failed extraction jobs, by actor then job id."""
    memory = ctx.memory(params["memoryId"])
    chosen = params.get("filter") or {}
    pipeline = ctx.extraction
    failed = _failed(ctx, pipeline, memory, chosen) if pipeline is not None else []
    page, token = page_of(
        failed,
        scope_key=f"memory:{memory.memory_id}",
        query={"filter": chosen},
        position=lambda rollout: [rollout.actor_id, rollout.rollout_id],
        limit=params.get("maxResults") or DEFAULT_MAX_RESULTS,
        token=params.get("nextToken"),
    )
    strategy_id = chosen.get("strategyId")
    jobs = [_job(pipeline, r, strategy_id) for r in page] if pipeline is not None else []
    answer: dict[str, Any] = {"jobs": jobs}
    if token is not None:
        answer["nextToken"] = token
    return answer


def _find_failed(
    ctx: ApiContext, pipeline: RolloutPipeline, memory: MemoryConfig, job_id: str
) -> Rollout:
    for actor in _actors(ctx, memory, None):
        try:
            rollout = pipeline.rollouts.get(scope_of(memory, actor), job_id)
        except RolloutNotFoundError:
            continue
        if _is_failed_extraction(rollout):
            return rollout
        break  # rollout ids are unique across actors: it is not failed
    raise ApiError.not_found(
        f"no failed extraction job {job_id!r} in memory {memory.memory_id!r}; "
        "ListMemoryExtractionJobs lists the ones that can be started again"
    )


def start_memory_extraction_job(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """Retry a failed rollout: mark it claimed again and release it (stage, announce)."""
    memory = ctx.memory(params["memoryId"])
    job_id = params["extractionJob"]["jobId"]
    pipeline = ctx.extraction
    if pipeline is None:
        raise ApiError.not_found(
            f"no failed extraction job {job_id!r} in memory {memory.memory_id!r}: this server "
            "runs no extraction, so no job has failed"
        )

    def execute() -> Outcome:
        rollout = _find_failed(ctx, pipeline, memory, job_id)
        retried = pipeline.rollouts.mark(
            rollout.scope, rollout.rollout_id, RolloutState.CLAIMED, now=ctx.clock.now()
        )
        pipeline.release_quietly(retried)  # else the sweep releases it within STALL_AFTER
        return as_stored({"jobId": rollout.rollout_id})

    return run_once(
        ctx,
        scope=memory.memory_id,
        operation="StartMemoryExtractionJob",
        params=params,
        execute=execute,
        replay=replay_stored,
    )
