"""StartMemoryExtractionJob and ListMemoryExtractionJobs, on a cairn that has no extraction yet.

AgentCore lists *failed* extraction jobs, and Start re-runs one of them. cairn has not run any
extraction (it arrives in a later release), so no job has failed: the list is empty and
starting a job answers that the job does not exist. Both validate their input fully and
neither pretends that work happened.
"""

from __future__ import annotations

from typing import Any

from cairn.api.context import ApiContext
from cairn.api.errors import ApiError


def start_memory_extraction_job(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    """Always 404 today: no extraction has run, so no failed job exists to start again."""
    memory = ctx.memory(params["memoryId"])
    raise ApiError.not_found(
        f"no failed extraction job {params['extractionJob']['jobId']!r} in memory "
        f"{memory.memory_id!r}: this cairn does not run extraction yet, so there is no job "
        "to start again"
    )


def list_memory_extraction_jobs(ctx: ApiContext, params: dict[str, Any]) -> dict[str, Any]:
    ctx.memory(params["memoryId"])
    if params.get("nextToken") is not None:
        raise ApiError.validation(
            "this nextToken was not issued by this server; list again without it",
            field="nextToken",
        )
    return {"jobs": []}
