"""What cairn's AgentCore API supports, per operation and notable field: the one source of the
table in docs/agentcore-compatibility.md.

``tests/unit/test_api_compatibility.py`` checks that every served operation has a row, that
every field named exists in the vendored service model, that every field the API refuses is
listed as not supported, and that the document shows exactly ``render_table()``; the test
column comes from ``cairn.api.compatibility_proofs``. Longer than 300 lines because it is the
table itself, one row of data per operation and field, not logic.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from cairn.api.compatibility_proofs import PROOFS


class Support(StrEnum):
    SUPPORTED = "supported"
    DIFFERS = "differs"
    NOT_SUPPORTED = "not supported"


@dataclass(frozen=True)
class Row:
    """One operation (``field`` empty) or one of its input fields (dotted wire path)."""

    operation: str
    field: str
    support: Support
    note: str


S, D, N = Support.SUPPORTED, Support.DIFFERS, Support.NOT_SUPPORTED
# The built-in strategies' triggers (cairn.extract.triggers: BUILT_IN_TRIGGERS on AWS,
# IN_PROCESS_TRIGGERS behind cairn serve).
_EXTRACTED = (
    "extracted from the memory's events: behind cairn serve every 2 messages or after 10 idle "
    "seconds (within seconds); on AWS 6 messages, about 4,000 tokens or 10 idle minutes "
    "release a rollout (docs/extraction.md)"
)

ROWS: tuple[Row, ...] = (
    # --- data plane: events --------------------------------------------------------------------
    Row("CreateEvent", "payload", S, "conversational, blob (any JSON, returned exactly) and json"),
    Row("CreateEvent", "sessionId", D, "optional in the model; cairn generates a UUID when absent"),
    Row("CreateEvent", "branch", S, "rootEventId must be an event of the session, else 404"),
    Row("CreateEvent", "metadata", S, "up to 15 string values, filterable in ListEvents"),
    Row(
        "CreateEvent",
        "clientToken",
        S,
        "a retry is answered with the first event for 24 hours; a retry is the same token "
        "with the same parameters but eventTimestamp, which clients re-stamp per attempt",
    ),
    Row(
        "CreateEvent",
        "",
        S,
        "201; eventTimestamp kept to the millisecond, as AgentCore orders it; counted toward "
        "the memory's extraction triggers in the same write",
    ),
    Row("CreateEvent", "extractionMode", S, "SKIP stores the event without counting it"),
    Row(
        "CreateEvent",
        "extractionConfig",
        D,
        "validated; namespaceVariables are not applied: extraction fills only {actorId}, "
        "{sessionId} and {memoryStrategyId} (a template with another variable fails its "
        "rollouts, which are then listed as failed jobs)",
    ),
    Row("GetEvent", "", S, ""),
    Row("DeleteEvent", "", S, "a real delete (the SQLite store overwrites the bytes)"),
    Row("ListEvents", "", S, "newest first, as the SDK and Strands expect"),
    Row("ListEvents", "filter.branch", S, "includeParentBranches adds the parent up to the fork"),
    Row("ListEvents", "filter.eventMetadata", S, "EQUALS_TO, EXISTS, NOT_EXISTS, AND-ed"),
    Row("ListEvents", "includePayloads", S, "false answers each event with an empty payload"),
    Row(
        "ListActors",
        "",
        S,
        "actors that have events (not actors that only have records); with principals, only "
        "the caller's",
    ),
    Row("ListSessions", "", S, "by session id; a session exists only while it has events"),
    Row("ListSessions", "filter", S, "HAS_EVENTS holds for every session listed"),
    Row(
        "IngestData",
        "",
        D,
        "202; the payload is stored as one event of the session (listed by ListEvents) and "
        "counted toward the extraction triggers like CreateEvent",
    ),
    # --- data plane: records -------------------------------------------------------------------
    Row(
        "RetrieveMemoryRecords",
        "",
        D,
        "the topK records whatever their similarity, as the service answers (recall's floors "
        "are off; a record opposite in meaning, cosine below 0, is left out); chosen by cairn's "
        "ranking per actor scope (cosine and keywords, paraphrase dedup and the untrusted "
        "share, a record with a quarantined source counted untrusted as recall counts it; "
        "each search journalled), answered in score order; score is the record's cosine to "
        "the query, as the service's, so a client's relevance bar means the same",
    ),
    Row(
        "RetrieveMemoryRecords",
        "namespace",
        D,
        "optional; a prefix on segment boundaries (AgentCore's grace-period behaviour), not an "
        "exact match; with neither namespace nor namespacePath the whole memory is searched; "
        "both at once are refused",
    ),
    Row(
        "RetrieveMemoryRecords",
        "namespacePath",
        S,
        "optional; a hierarchical prefix on segment boundaries",
    ),
    Row("RetrieveMemoryRecords", "searchCriteria.topK", S, "1-100, default 10"),
    Row(
        "RetrieveMemoryRecords",
        "searchCriteria.metadataFilters",
        D,
        "every operator, AND-ed, on typed values (dates too); through the recall index, before "
        "ranking: a match is found however many records the filter rejects rank above it",
    ),
    Row(
        "RetrieveMemoryRecords",
        "searchCriteria.memoryStrategyId",
        S,
        "narrows the records before ranking, as metadataFilters",
    ),
    Row("ListMemoryRecords", "", S, "by actor, then record id"),
    Row(
        "ListMemoryRecords",
        "namespace",
        D,
        "optional; a prefix on segment boundaries, as in Retrieve (neither namespace nor "
        "namespacePath lists the whole memory)",
    ),
    Row("ListMemoryRecords", "namespacePath", S, "optional; a hierarchical prefix, as in Retrieve"),
    Row(
        "ListMemoryRecords",
        "metadataFilters",
        S,
        "every operator, AND-ed, on typed values (dates too); a scan of the records under the "
        "namespace",
    ),
    Row("GetMemoryRecord", "", S, "404 for a deleted record"),
    Row(
        "GetMemoryRecord",
        "namespace",
        D,
        "a filter (404 if the record is elsewhere); no IAM condition key: principals bind "
        "callers to actors and namespaces instead (docs/security.md)",
    ),
    Row(
        "DeleteMemoryRecord",
        "",
        D,
        "soft: the record is retracted, gone from every read; its content stays in its history "
        "until `cairn erase`",
    ),
    Row(
        "BatchCreateMemoryRecords",
        "",
        S,
        "201; filed in the actor scope the namespace names through a strategy template, else "
        "in the shared scope; source `import`, so untrusted; chunks of 16 are atomic",
    ),
    Row(
        "BatchCreateMemoryRecords",
        "records.namespaces",
        D,
        "an empty list files the record under /",
    ),
    Row("BatchCreateMemoryRecords", "records.metadata", S, "typed values round-trip exactly"),
    Row(
        "BatchCreateMemoryRecords",
        "recordExpirySpecification",
        D,
        "recordExpiryDurationDays: the records expire that many days from now (GetMemoryRecord "
        "says expiresAt); from then they are gone from every API read, as deleted ones, and "
        "their content stays in history until `cairn erase`; cairn's own recall "
        "(`cairn recall`, MemorySession) does not apply expiry; action is refused on create",
    ),
    Row(
        "BatchUpdateMemoryRecords",
        "",
        D,
        "a new version of the record (the old one stays in its history); adds the source "
        "`import`, so the record becomes untrusted",
    ),
    Row(
        "BatchUpdateMemoryRecords",
        "records.namespaces",
        D,
        "a record never moves: another namespace fails it (400)",
    ),
    Row("BatchUpdateMemoryRecords", "records.sourceNamespaces", D, "ignored"),
    Row(
        "BatchUpdateMemoryRecords",
        "recordExpirySpecification",
        D,
        "as the service: days overwrite from now, action REMOVE clears the expiry, and without "
        "either a record that has one gets it again from now with its last days; expired "
        "records answer 404, as deleted ones",
    ),
    Row("BatchDeleteMemoryRecords", "", D, "soft, as DeleteMemoryRecord"),
    Row(
        "StartMemoryExtractionJob",
        "",
        D,
        "jobId is a failed rollout's id: it is claimed again and released (staged, announced) "
        "at once; on AWS, within SNS FIFO's 5-minute deduplication window of its previous "
        "announcement, the sweep's re-announcement delivers it (15 minutes later)",
    ),
    Row(
        "ListMemoryExtractionJobs",
        "",
        D,
        "the failed rollouts (status FAILED, failureReason, the messages of their events that "
        "still exist); strategyId only when the memory has one strategy or the filter names "
        "one; the 1,000 oldest pending rollouts of each actor are read",
    ),
    # --- control plane -------------------------------------------------------------------------
    Row(
        "CreateMemory",
        "",
        S,
        "202, ACTIVE at once; id `<name>-<10 alnum>`; ARN account 000000000000",
    ),
    Row("CreateMemory", "eventExpiryDuration", D, "stored and returned; events do not expire yet"),
    Row("CreateMemory", "memoryStrategies.semanticMemoryStrategy", S, _EXTRACTED),
    Row("CreateMemory", "memoryStrategies.summaryMemoryStrategy", S, _EXTRACTED),
    Row("CreateMemory", "memoryStrategies.userPreferenceMemoryStrategy", S, _EXTRACTED),
    Row(
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.selfManagedConfiguration",
        D,
        "triggers (messages 1-50, tokens 100-500000, idle 10-3000 s) and history window (0-50) "
        "drive extraction; rollouts are staged and announced where cairn's stack puts them "
        "(its bucket, its topic: subscribe there), not the topic and bucket given",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.semanticOverride",
        D,
        "extracted as the semantic strategy with appendToPrompt added to its instructions "
        "(also userPreferenceOverride; summaryOverride adds its consolidation prompt, since "
        "cairn writes summaries in extraction); returned by GetMemory as given; modelId is "
        "kept, not called (one model provider per deployment); the consolidation prompt of "
        "semantic and preference overrides is kept, not applied; changing an override with "
        "UpdateMemory is refused (delete and add the strategy)",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.episodicOverride",
        D,
        "extracted as the episodic strategy: the extraction appendToPrompt is added to the "
        "episode instructions, the reflection appendToPrompt to the reflection instructions; "
        "reflection.namespaceTemplates is required and checked as reflectionConfiguration's; "
        "the consolidation prompt is kept, not applied (episodes are never merged); modelIds "
        "kept, not called; returned by GetMemory as EPISODIC_OVERRIDE",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.episodicMemoryStrategy",
        S,
        "an episode (situation, intent, actions, outcome) per extracted segment of a session, "
        "under the strategy's template (default .../sessions/{sessionId}/); returned by "
        "GetMemory with type EPISODIC (docs/extraction.md)",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.episodicMemoryStrategy.reflectionConfiguration",
        D,
        "required, as the service requires it; reflections across the actor's episodes after "
        "each new episode once two are filed; the template must contain {actorId} (cairn "
        "reflects within one actor, so erasing an actor erases them) and be the episodic "
        "template or a prefix of it; returned as configuration.reflection."
        "episodicReflectionConfiguration; changed with UpdateMemory's modify",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.semanticMemoryStrategy.memoryRecordSchema",
        D,
        "semantic, summary, user preference and custom strategies: returned by GetMemory as "
        "given, replaced by UpdateMemory's modify; LLM_INFERRED fields are asked of the "
        "extraction model with their definition and kept on the record only when of the "
        "right type and within their validation (the offline heuristic fills none); records "
        "written with BatchCreate/UpdateMemoryRecords naming the strategy must give declared "
        "keys valid values; refused with a 400 naming what is wrong: STRICTLY_CONSISTENT (a "
        "staged rollout does not carry its events' metadata), a validation of another type, "
        "a key twice, minValue above maxValue, and any schema on an episodic strategy",
    ),
    Row(
        "CreateMemory",
        "memoryStrategies.semanticMemoryStrategy.recordExpirySpecification",
        D,
        "any strategy: the records it extracts expire that many days after their rollout was "
        "staged, then are gone from every API read (as BatchCreateMemoryRecords' expiry); "
        "returned by GetMemory as recordExpiryDurationDays; UpdateMemory's modify sets or "
        "(action REMOVE) clears it for records extracted from then on",
    ),
    Row(
        "CreateMemory",
        "encryptionKeyArn",
        N,
        "refused: cairn encrypts with its deployment's own key (the stack's KMS key), not one "
        "per memory",
    ),
    Row(
        "CreateMemory",
        "streamDeliveryResources",
        D,
        "one Kinesis data stream, returned as given; every record version cairn writes is one "
        "event with an id a redelivery repeats (at least once, per scope in commit order), an "
        "erasure one tombstone event with no content; FULL_CONTENT adds the version's content "
        "read at delivery, so an erased record's earlier events carry none either. Delivered "
        "by the stack's stream delivery function to the one stream it is deployed with (a "
        'memory naming another is refused; docs/deploy.md, "Record streaming"); '
        "behind `cairn serve` stored and returned but not sent to Kinesis: the same changes "
        "are read with `cairn changes --follow --json`",
    ),
    Row("CreateMemory", "memoryExecutionRoleArn", D, "stored and returned; never assumed"),
    Row("CreateMemory", "indexedKeys", D, "stored and returned; every metadata key is filterable"),
    Row("CreateMemory", "namespaceKeys", S, "declared variables may be used in templates"),
    Row("CreateMemory", "tags", D, "accepted and discarded: there is no tagging API"),
    Row("CreateMemory", "clientToken", S, "a retry answers with the memory created first"),
    Row("GetMemory", "", S, ""),
    Row("GetMemory", "view", D, "ignored: nothing is encrypted per memory"),
    Row("UpdateMemory", "", S, "strategies deleted, modified, then added; stays ACTIVE"),
    Row("UpdateMemory", "addIndexedKeys", D, "stored and returned; keys cannot be removed"),
    Row(
        "UpdateMemory",
        "streamDeliveryResources",
        D,
        "as in CreateMemory; `resources: []` turns delivery off",
    ),
    Row(
        "DeleteMemory",
        "",
        D,
        "synchronous: erases every event, record (tombstones with digests stay), journal "
        "entry, rollout and staged payload, answers DELETING, and GetMemory is 404 at once",
    ),
    Row("ListMemories", "", S, "by memory id"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    """The markdown table of ``ROWS``."""
    lines = [
        "| operation | field | support | how it differs, or why not | test |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        field = f"`{row.field}`" if row.field else "(operation)"
        proof = PROOFS.get((row.operation, row.field))
        test = f"`{proof}`" if proof else "none yet"
        note = _cell(row.note) or "—"
        lines.append(f"| {row.operation} | {field} | {row.support.value} | {note} | {test} |")
    return "\n".join(lines) + "\n"
