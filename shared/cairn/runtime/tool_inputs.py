"""What the model may give each memory tool: the input models its schema is generated from.

No input names a memory, an actor or a namespace: the tools are pinned to their run's scope, and
an unknown field is refused. Sizes are checked in UTF-8 bytes, the unit the limits are set in.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from cairn.models import RECORD_ID_PATTERN, Frozen, Slug

LEARN = "learn"
MEMORY_EDIT = "memory_edit"
MEMORY_RECALL = "memory_recall"

Channel = Literal["records", "turns", "chunks"]

MAX_QUERY_BYTES = 2000
MAX_RESULTS = 20
DEFAULT_RESULTS = 8
MAX_ENTRY_BYTES = 2000
# A lesson is one or two sentences; the same cap as a recalled entry, so it is always shown whole.
MAX_LESSON_BYTES = 2000


def _within_bytes(text: str, limit: int, what: str) -> str:
    size = len(text.encode("utf-8"))
    if size > limit:
        raise ValueError(f"{what} is {size} bytes of UTF-8; at most {limit} are allowed")
    if not text.strip():
        raise ValueError(f"{what} must contain words, not only whitespace")
    return text


class LearnInput(Frozen):
    lesson: str = Field(
        min_length=1,
        json_schema_extra={"maxLength": MAX_LESSON_BYTES},
        description="The lesson: one or two self-contained sentences that will help in a "
        f"future run (at most {MAX_LESSON_BYTES} bytes). No secrets.",
    )
    tags: tuple[Slug, ...] = Field(
        default=(), max_length=8, description="Optional lowercase labels, e.g. deploy, billing."
    )

    @field_validator("lesson")
    @classmethod
    def _lesson_size(cls, value: str) -> str:
        return _within_bytes(value, MAX_LESSON_BYTES, "lesson")


class MemoryEditInput(Frozen):
    action: Literal["update", "forget", "invalidate"] = Field(
        description="update: replace the content with a corrected version; forget: the user "
        "asked to forget it; invalidate: it is wrong or no longer true."
    )
    record_id: str = Field(
        pattern=RECORD_ID_PATTERN, description="The memory's id, as shown in recalled memories."
    )
    content: str | None = Field(
        default=None,
        json_schema_extra={"maxLength": MAX_ENTRY_BYTES},
        description=f"For update only: the full corrected content (at most {MAX_ENTRY_BYTES} "
        "bytes).",
    )
    reason: str | None = Field(
        default=None, max_length=200, description="Why, in a few words (kept in its history)."
    )

    @model_validator(mode="after")
    def _content_matches_action(self) -> Self:
        if self.action == "update":
            if self.content is None:
                raise ValueError("update needs content: the full corrected text")
            _within_bytes(self.content, MAX_ENTRY_BYTES, "content")
        elif self.content is not None:
            raise ValueError(f"{self.action} takes no content; it retracts the memory")
        return self


class MemoryRecallInput(Frozen):
    query: str = Field(
        min_length=1,
        json_schema_extra={"maxLength": MAX_QUERY_BYTES},
        description=f"What to look for, in words (at most {MAX_QUERY_BYTES} bytes).",
    )
    max_results: int = Field(
        default=DEFAULT_RESULTS,
        ge=1,
        le=MAX_RESULTS,
        description=f"How many memories to return, 1-{MAX_RESULTS} (default {DEFAULT_RESULTS}).",
    )
    channels: tuple[Channel, ...] = Field(
        default=("records",),
        min_length=1,
        max_length=3,
        description="Where to look: records (what is remembered about the user), turns (what "
        "was said in past conversations), chunks (summaries of past conversations); one "
        "ranking over those named (default records only).",
    )

    @field_validator("query")
    @classmethod
    def _query_size(cls, value: str) -> str:
        return _within_bytes(value, MAX_QUERY_BYTES, "query")

    @field_validator("channels")
    @classmethod
    def _channels_once(cls, value: tuple[Channel, ...]) -> tuple[Channel, ...]:
        if len(set(value)) != len(value):
            raise ValueError("name each channel once")
        return value
