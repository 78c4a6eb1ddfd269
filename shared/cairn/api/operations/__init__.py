"""Every served operation by name: a function of the context and the validated parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cairn.api.context import ApiContext
from cairn.api.operations import (
    events,
    extraction,
    memories,
    records,
    retrieve,
    sessions,
)

Handler = Callable[[ApiContext, dict[str, Any]], dict[str, Any]]

HANDLERS: dict[str, Handler] = {
    # data plane
    "CreateEvent": events.create_event,
    "GetEvent": events.get_event,
    "DeleteEvent": events.delete_event,
    "ListEvents": events.list_events,
    "IngestData": events.ingest_data,
    "ListActors": sessions.list_actors,
    "ListSessions": sessions.list_sessions,
    "RetrieveMemoryRecords": retrieve.retrieve_memory_records,
    "ListMemoryRecords": retrieve.list_memory_records,
    "GetMemoryRecord": records.get_memory_record,
    "DeleteMemoryRecord": records.delete_memory_record,
    "BatchCreateMemoryRecords": records.batch_create,
    "BatchUpdateMemoryRecords": records.batch_update,
    "BatchDeleteMemoryRecords": records.batch_delete,
    "StartMemoryExtractionJob": extraction.start_memory_extraction_job,
    "ListMemoryExtractionJobs": extraction.list_memory_extraction_jobs,
    # control plane
    "CreateMemory": memories.create_memory,
    "GetMemory": memories.get_memory,
    "UpdateMemory": memories.update_memory,
    "DeleteMemory": memories.delete_memory,
    "ListMemories": memories.list_memories,
}
