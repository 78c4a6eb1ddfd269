"""The agent's memory tools: ``learn``, ``memory_edit`` and ``memory_recall``, pinned to one run.

A ``MemoryTools`` is made by a run for the run's scope, session and run id; no tool input can
name a memory or an actor (unknown fields are refused), and a record id outside the scope is
answered exactly like one that does not exist. The tools are offered only when the session has
a store; ``memory_edit`` only where the store can curate. ``learn`` and ``memory_edit`` write
durable state and declare ``needs_permission``: a host with a permission gate asks it first
(``cairn.runtime.converse`` and the Strands hook do), and the run's ``SinkGuard`` refuses them
when their input repeats untrusted recalled memory the host did not release
(``cairn.runtime.release``). Schemas for Bedrock Converse, OpenAI and
Strands are generated from the input models (``cairn.runtime.tool_formats``); what each tool is
and what it answers are ``cairn.runtime.tool_definitions``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from cairn.changes import NewRecord
from cairn.errors import CairnError, ConfigurationError, ConflictError, StoreUnavailableError
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery
from cairn.recall.budget import truncate_utf8
from cairn.recall.render import CAVEAT
from cairn.runtime import tool_formats
from cairn.runtime.release import SinkGuard
from cairn.runtime.session_store import SessionStore, Written
from cairn.runtime.taint import TaintLedger
from cairn.runtime.tool_definitions import (
    DEFINITIONS,
    ToolDefinition,
    ToolOutcome,
    offered_tools,
)
from cairn.runtime.tool_inputs import (
    MAX_ENTRY_BYTES,
    LearnInput,
    MemoryEditInput,
    MemoryRecallInput,
)
from cairn.visible_text import neutralised

# Model-inferred: ranked below what the user stated (0.9), as the cairn command files it.
LESSON_CONFIDENCE = 0.5
LESSON_CATEGORY = "lesson"
# Room for MAX_RESULTS entries of MAX_ENTRY_BYTES with their labels: only top_k and the entry
# cap bound a tool answer, not the prompt block's budget.
_TOOL_BLOCK_BYTES = 64_000


class MemoryTools:
    """The memory tools of one run, pinned to its scope; none if the session has no store."""

    def __init__(
        self,
        store: SessionStore | None,
        scope: Scope | None,
        *,
        session_id: str,
        run_id: str,
        policy: RecallPolicy,
        curate: bool = True,
        guard: SinkGuard | None = None,
        ledger: TaintLedger | None = None,
    ) -> None:
        self._store = store
        self._guard = guard
        self._ledger = ledger
        self._scope = scope
        self._source = Source(kind=SourceKind.MODEL, session_id=session_id, run_id=run_id)
        self._policy = policy.model_copy(
            update={
                "max_entry_bytes": MAX_ENTRY_BYTES,
                "max_block_bytes": max(policy.max_block_bytes, _TOOL_BLOCK_BYTES),
                "context_share": None,
                "context_window_tokens": None,
            }
        )
        offered = offered_tools(store if scope is not None else None, curate=curate)
        self.definitions: tuple[ToolDefinition, ...] = offered

    def definition(self, name: str) -> ToolDefinition | None:
        """The offered tool named ``name``, or ``None``."""
        return next((d for d in self.definitions if d.name == name), None)

    def converse_tool_config(self) -> dict[str, Any] | None:
        """The Converse ``toolConfig`` for the offered tools; ``None`` when none are offered."""
        return tool_formats.converse_tool_config(self.definitions)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list for the offered tools (empty when none are)."""
        return tool_formats.openai_tools(self.definitions)

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run tool ``name``; bad input, an unknown id or a store outage is a failed outcome
        (not an exception) whose message tells the model what to do. Only a
        ``ConfigurationError`` (the host's setup is wrong) is raised."""
        if self.definition(name) is None or self._store is None or self._scope is None:
            offered = ", ".join(d.name for d in self.definitions) or "none"
            return ToolOutcome.failed(f"no tool named {name!r} here; memory tools: {offered}")
        if not isinstance(arguments, Mapping):
            return ToolOutcome.failed(f"the input of {name} must be a JSON object")
        try:
            parsed = DEFINITIONS[name].input_model.model_validate(dict(arguments))
            if self._guard is not None and DEFINITIONS[name].needs_permission:
                self._guard.check(name, arguments)  # raises unless untrusted recall is released
            return ToolOutcome(ok=True, content=self._run(self._store, self._scope, parsed))
        except ValidationError as exc:
            return ToolOutcome.failed(describe_invalid(name, exc))
        except StoreUnavailableError:
            return ToolOutcome.failed("memory is unavailable right now; try again later")
        except ConflictError:
            return ToolOutcome.failed("the memory changed meanwhile; recall it again and retry")
        except ConfigurationError:
            raise  # the host's setup is wrong: no message to the model can fix that
        except CairnError as exc:  # not found (also: another scope's id), not live, bad input
            return ToolOutcome.failed(exc.message)

    def _run(self, store: SessionStore, scope: Scope, parsed: BaseModel) -> dict[str, Any]:
        if isinstance(parsed, LearnInput):
            return self._learn(store, scope, parsed)
        if isinstance(parsed, MemoryEditInput):
            return self._edit(store, scope, parsed)
        if isinstance(parsed, MemoryRecallInput):
            return self._recall(store, scope, parsed)
        raise TypeError(f"no memory tool takes {type(parsed).__name__}")

    def _learn(self, store: SessionStore, scope: Scope, given: LearnInput) -> dict[str, Any]:
        record = NewRecord(
            namespace=f"/lessons/{scope.actor_id}/",
            category=LESSON_CATEGORY,
            content=given.lesson,
            confidence=LESSON_CONFIDENCE,
            tags=given.tags,
            sources=(self._source,),
        )
        written = store.learn(scope, record)
        return {**_shown(written), "confirmed_existing": written.confirmed}

    def _edit(self, store: SessionStore, scope: Scope, given: MemoryEditInput) -> dict[str, Any]:
        if given.content is not None:  # the input model allows content only with update
            written = store.revise(scope, given.record_id, given.content, self._source)
        else:
            reason = f"{given.action} (run {self._source.run_id})"
            if given.reason:
                reason = f"{reason}: {given.reason}"
            written = store.retract(scope, given.record_id, reason)
        return {**_shown(written), "action": given.action}

    def _recall(
        self, store: SessionStore, scope: Scope, given: MemoryRecallInput
    ) -> dict[str, Any]:
        query = RecallQuery(text=given.query, top_k=given.max_results)
        if given.channels != ("records",):
            return self._recall_channels(store, scope, query, frozenset(given.channels))
        found = store.recall(scope, query, self._policy, journal=True)
        if self._ledger is not None:
            self._ledger.add(found.items, found.journal_id)
        results = []
        for item in found.items:
            # Shown to the model like a rendered entry: hidden characters as visible markers.
            content, truncated = truncate_utf8(neutralised(item.content), MAX_ENTRY_BYTES)
            results.append(
                {
                    "record_id": item.record_id,
                    "content": content,
                    "truncated": truncated,
                    "date": item.entry.date,
                    "confidence": round(item.entry.confidence, 2),
                    "trust": item.entry.trust.value,
                }
            )
        return {"note": CAVEAT, "results": results}

    def _recall_channels(
        self, store: SessionStore, scope: Scope, query: RecallQuery, channels: frozenset[str]
    ) -> dict[str, Any]:
        found = store.recall_channels(scope, query, self._policy, channels)
        results = []
        for hit in found.hits:
            text, truncated = truncate_utf8(neutralised(hit.text), MAX_ENTRY_BYTES)
            shown = {"kind": hit.kind, "id": hit.ref, "session_id": hit.session_id}
            results.append(
                {**shown, "content": text, "truncated": truncated, "date": hit.date}
                | {"trust": hit.trust.value}
            )
        return {"note": CAVEAT, "results": results, "journal_id": found.journal_id}


def _shown(written: Written) -> dict[str, Any]:
    return {
        "record_id": written.record_id,
        "version": written.version,
        "status": written.status.value,
        "trust": written.trust.value,
    }


def describe_invalid(tool: str, error: ValidationError) -> str:
    """One line naming each invalid field and why, never echoing the input."""
    parts = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "input"
        reason = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            reason = "is not an input of this tool (tools are pinned to this run's user)"
        parts.append(f"{where}: {reason}")
    return f"invalid input for {tool}: " + "; ".join(parts)
