"""Every bound of a consolidation pass, each with the reason for its default (DESIGN §6)."""

from __future__ import annotations

from pydantic import Field

from cairn.changes import MAX_CHANGES_PER_APPLY, MAX_CONSUMED_ROLLOUTS, MAX_SNAPSHOT_RECORDS
from cairn.model_request import MAX_OUTPUT_TOKENS, MAX_TIMEOUT_SECONDS
from cairn.models import Frozen


class ConsolidationPolicy(Frozen):
    """Bounds of one pass: what it reads, what it may ask for, and how long it may take."""

    # Reading ---------------------------------------------------------------------------------
    # Pending evidence rollouts a pass consumes; each is two DynamoDB transaction items.
    max_rollouts: int = Field(default=MAX_CONSUMED_ROLLOUTS, ge=1, le=MAX_CONSUMED_ROLLOUTS)
    # Live records shown to the model, and checked as the commit's snapshot.
    max_records: int = Field(default=MAX_SNAPSHOT_RECORDS, ge=1, le=MAX_SNAPSHOT_RECORDS)
    # Live heads read to choose those records from (the most related to the evidence first).
    max_scanned_records: int = Field(default=1000, ge=1, le=10_000)

    # The model call --------------------------------------------------------------------------
    # The request JSON: excerpts are shortened progressively to fit; no id is ever dropped.
    max_request_bytes: int = Field(default=60_000, ge=4_000, le=300_000)
    # Changes one answer may hold (and store changes they may map to: one atomic apply).
    max_changes: int = Field(default=MAX_CHANGES_PER_APPLY, ge=1, le=MAX_CHANGES_PER_APPLY)
    # 16 one-line changes with their citations fit in ~1,500 tokens; 2,048 leaves headroom.
    max_output_tokens: int = Field(default=2048, ge=256, le=MAX_OUTPUT_TOKENS)
    # Tidying is bookkeeping, not writing: no sampling.
    temperature: float = Field(default=0.0, ge=0.0, le=1.0)
    # What a model-inferred addition may claim: DESIGN §4, user-stated outranks inferred.
    inferred_confidence_cap: float = Field(default=0.7, ge=0.0, le=1.0)
    # Shown per record: a few short tags are enough to tell records apart.
    max_tags_shown: int = Field(default=4, ge=0, le=16)
    max_tag_chars: int = Field(default=32, ge=8, le=128)

    # Time ------------------------------------------------------------------------------------
    # A whole pass (reads, the model call, the commit) is bounded at this; past it nothing is
    # committed (a deadline failure).
    pass_seconds: float = Field(default=60.0, gt=0.0, le=MAX_TIMEOUT_SECONDS)
    # A deadline failure (or a conflicting write) is retried once, this much later.
    retry_after_seconds: float = Field(default=5.0, ge=0.0, le=300.0)


DEFAULT_CONSOLIDATION_POLICY = ConsolidationPolicy()
