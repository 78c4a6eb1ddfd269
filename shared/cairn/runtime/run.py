"""``Run``: one agent run inside a session, with the recall block assembled once for it.

The block is recalled when the run starts and never changes while it lasts, whatever the run
learns or edits, so a prompt prefix built on it stays byte-identical for every model call of the
run (the KV cache keeps it). So does the session's boot window (``cairn.history.boot_window``),
when it has one: ``history_block``, shown after the recall block. A host that wants topical
recall as well turns on ``per_turn_recall``: ``turn_context`` then recalls for one turn, leaves
out what the boot block (or an earlier turn) already showed, a memory whose every source turn
the boot window shows verbatim, and what lacks semantic evidence (so a generic message injects
nothing), and journals every injection it makes.

``complete`` ends the run. A root run (no ``parent_run_id``) that completed successfully stages
its bounded transcript as evidence for consolidation (``cairn.consolidate.evidence``) when the
session has an evidence stager; a child, parked, failed or aborted run stages nothing. A
failure to stage never reaches the agent's answer: it is reported to the session's
``on_consolidation_error`` and the run goes on.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from cairn.consolidate.evidence import (
    EvidencePayload,
    RunIdentity,
    TranscriptMessage,
    build_evidence,
)
from cairn.consolidate.failures import ConsolidationFailure, ErrorCallback, report
from cairn.errors import CairnError, StoreUnavailableError
from cairn.history.boot_window import BootWindow
from cairn.models import Role, Scope
from cairn.ports import Clock
from cairn.recall import RecallQuery
from cairn.recall.query import MAX_QUERY_CHARS, MAX_TOP_K
from cairn.recall.render import render_block
from cairn.rollout.index import new_evidence_id
from cairn.runtime.options import SessionOptions
from cairn.runtime.release import Released, ReleaseGate, SinkGuard, deny_release
from cairn.runtime.session_store import Recalled, RecalledItem, SessionStore
from cairn.runtime.taint import TaintLedger
from cairn.runtime.tools import MemoryTools

logger = logging.getLogger(__name__)


class TurnRecorder(Protocol):
    """Records one turn in the session (``MemorySession.add_turn``)."""

    def __call__(self, role: Role | str, text: str, *, speaker: str | None = None) -> None: ...


EvidenceSink = Callable[[EvidencePayload], object]
"""Stages a run's evidence (``cairn.consolidate.evidence.EvidenceStager.stage``)."""
RunStatus = Literal["completed", "failed", "aborted", "parked"]


def new_run_id(clock: Clock) -> str:
    """``run-`` + 12 hex digits of epoch milliseconds + 16 random hex digits."""
    return f"run-{int(clock.now().timestamp() * 1000):012x}{secrets.token_hex(8)}"


def recall_query(text: str, top_k: int, options: SessionOptions) -> RecallQuery | None:
    """The query for ``text`` (cut to the query limit), or ``None`` if it has no words."""
    if not text.strip():
        return None
    return RecallQuery(
        text=text[:MAX_QUERY_CHARS], top_k=top_k, namespace_prefix=options.namespace_prefix
    )


class Run:
    """One run: its id, its fixed recall ``block``, and its tools, all pinned to the scope."""

    def __init__(
        self,
        *,
        store: SessionStore | None,
        scope: Scope | None,
        session_id: str,
        query: str,
        options: SessionOptions,
        clock: Clock,
        record: TurnRecorder,
        evidence: EvidenceSink | None = None,
        on_error: ErrorCallback | None = None,
        parent_run_id: str | None = None,
        history: BootWindow | None = None,
        ledger: TaintLedger | None = None,
        release: ReleaseGate = deny_release,
    ) -> None:
        self.run_id = new_run_id(clock)
        self._ledger = ledger if ledger is not None else TaintLedger()
        self._guard = SinkGuard(
            ledger=self._ledger,
            gate=release,
            store=store,
            scope=scope,
            run_id=self.run_id,
            policy=options.policy,
            strict=options.taint == "strict",
        )
        self.parent_run_id = parent_run_id
        self.status: RunStatus | None = None
        self.evidence_id: str | None = None
        self._store = store
        self._scope = scope
        self._session_id = session_id
        self._options = options
        self._clock = clock
        self._record = record
        self._evidence = evidence
        self._on_error = on_error
        self._transcript: list[TranscriptMessage] = []
        # Fixed at the first completion, so a restage keeps the rollout id and the bytes.
        self._identity: RunIdentity | None = None
        self.tools = MemoryTools(
            store,
            scope,
            session_id=session_id,
            run_id=self.run_id,
            policy=options.policy,
            curate=options.curate,
            guard=self._guard,
            ledger=self._ledger,
        )
        boot = self._assemble(query)
        self._ledger.add(boot.items, boot.journal_id)
        self.block: str = boot.block
        self.journal_id: str | None = boot.journal_id
        self.injections: list[str] = []
        self._shown = {item.record_id for item in boot.items}
        self.history_block: str = history.block if history is not None else ""
        self._in_window = history.verbatim_events if history is not None else frozenset()

    @property
    def has_memory(self) -> bool:
        return self._store is not None

    @property
    def releases(self) -> tuple[Released, ...]:
        """The calls of this run the host's gate released, each with its journal id."""
        return tuple(self._guard.releases)

    def require_release(self, sink: str, arguments: Mapping[str, Any]) -> Released | None:
        """Ask before a host's own sink runs (sending a message, calling an API): ``None`` if
        ``arguments`` carry no untrusted recall of this session, the journalled release if the
        host's gate gave one, else ``ReleaseRequiredError`` (do not run the sink)."""
        return self._guard.check(sink, arguments)

    def system_prompt(self, base: str) -> str:
        """``base`` followed by the run's block and its boot window (just ``base`` in a
        memoryless session)."""
        return "\n\n".join(part for part in (base, self.block, self.history_block) if part)

    def add_turn(
        self,
        role: Role | str,
        text: str,
        *,
        tool_calls: Sequence[str] = (),
        speaker: str | None = None,
    ) -> None:
        """Record a turn in the session (buffered; see ``MemorySession.add_turn``, ``speaker``
        too) and in the run's transcript, with the names of the tools it called."""
        self._record(role, text, speaker=speaker)
        known = isinstance(role, Role) or role.upper() in Role.__members__
        if known and (text.strip() or tool_calls):
            kind = role if isinstance(role, Role) else Role(role.upper())
            self._transcript.append(
                TranscriptMessage(role=kind, text=text, tool_calls=tuple(tool_calls))
            )

    def complete(
        self,
        final_answer: str | None,
        *,
        status: RunStatus = "completed",
        transcript: Sequence[TranscriptMessage] | None = None,
    ) -> str | None:
        """End the run; a completed root run stages its evidence and returns its rollout id.

        ``transcript`` defaults to the turns recorded through ``add_turn``. Completing again
        stages again under the same rollout id (a no-op once staged). Never raises for a
        memory failure: it goes to the session's ``on_consolidation_error``.
        """
        self.status = status
        if status != "completed" or self.parent_run_id is not None:
            return None
        if self._evidence is None or self._scope is None:
            return None
        if self._identity is None:
            now = self._clock.now()
            self._identity = RunIdentity(
                scope=self._scope,
                session_id=self._session_id,
                run_id=self.run_id,
                rollout_id=new_evidence_id(now),
                completed_at=now,
            )
            self.evidence_id = self._identity.rollout_id
        try:
            payload = build_evidence(self._identity, transcript or self._transcript, final_answer)
            self._evidence(payload)
        except Exception as exc:  # the answer stands whatever happens to its evidence
            retryable = isinstance(exc, CairnError) and exc.retryable
            message = exc.message if isinstance(exc, CairnError) else "staging crashed"
            logger.warning(
                "cairn: evidence of run %s not staged (%s)", self.run_id, type(exc).__name__
            )
            failure = ConsolidationFailure(
                scope=self._scope,
                stage="stage",
                error=type(exc).__name__,
                retryable=retryable,
                message=message,
            )
            report(self._on_error, failure)
        return self.evidence_id

    def turn_context(self, text: str) -> str | None:
        """A block of memories relevant to this turn that the run has not shown yet, or
        ``None`` (per-turn recall off, no store, or nothing with enough evidence)."""
        if not self._options.per_turn_recall or self._store is None or self._scope is None:
            return None
        wanted = min(MAX_TOP_K, self._options.turn_top_k + len(self._shown))
        query = recall_query(text, wanted, self._options)
        if query is None:
            return None
        try:
            found = self._store.recall(self._scope, query, self._options.policy, journal=False)
        except StoreUnavailableError:
            logger.warning("cairn: per-turn recall skipped, the store is unavailable")
            return None
        fresh = self._unshown(found.items)
        if not fresh:
            return None
        journal_id = self._store.journal_injection(self._scope, query, fresh, self._options.policy)
        self._ledger.add(fresh, journal_id)
        if journal_id is not None:
            self.injections.append(journal_id)
        self._shown.update(item.record_id for item in fresh)
        logger.info("cairn: injected %d memories for a turn (journal %s)", len(fresh), journal_id)
        return render_block([item.entry for item in fresh])

    def _unshown(self, items: tuple[RecalledItem, ...]) -> list[RecalledItem]:
        floor = self._options.turn_min_evidence
        fresh = [
            item
            for item in items
            if item.record_id not in self._shown
            and not (item.source_events and item.source_events <= self._in_window)
            and item.evidence is not None
            and item.evidence >= floor
        ]
        return fresh[: self._options.turn_top_k]

    def _assemble(self, text: str) -> Recalled:
        if self._store is None or self._scope is None:
            return Recalled(block="", items=(), journal_id=None)
        empty = Recalled(block=render_block(()), items=(), journal_id=None)
        query = recall_query(text, self._options.boot_top_k, self._options)
        if query is None:
            return empty
        try:
            return self._store.recall(self._scope, query, self._options.policy, journal=True)
        except StoreUnavailableError:
            # A memory outage must not take the agent down: the run goes on without recall.
            logger.warning("cairn: recall skipped for this run, the store is unavailable")
            return empty
