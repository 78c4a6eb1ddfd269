"""``MemorySession``: one conversation's memory, on any store, or on none.

A session is opened for ``(memory, actor, session)``: over ``cairn.ports.Stores`` in this
process (``MemorySession.local``: embedded SQLite, or DynamoDB with the caller's credentials), or
over a cairn HTTP endpoint (``MemorySession.agentcore``). It buffers turns and writes each batch
at once (``SessionOptions.batch_size``, a byte bound, ``flush``, ``close``, interpreter exit),
hands extraction what no trigger released when it closes (with a ``release``: the embedded one,
so a session shorter than the message trigger is filed then, not by the idle sweep), and
assembles recall once per run (``start_run``), with the session's boot window (``boot_window``,
``SessionOptions.history_budget_tokens``; over HTTP, of turns only). A
memoryless session (``MemorySession.memoryless``) has the same API: its runs have an empty
block and no tools, its turns are not kept, so a host never branches on memory. ``recall``
answers records, turns and chunks on demand, journalled.

Longer than 300 lines because ``MemorySession`` is the runtime's one public class: its
constructors for each kind of store, its runs, turns, boot window and recall on demand are the
surface a host sees, and each delegates to its own module.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from types import TracebackType
from typing import Any

from pydantic import TypeAdapter, ValidationError

from cairn.clock import SystemClock
from cairn.consolidate.failures import ErrorCallback
from cairn.errors import CairnError, InvalidInputError, StoreUnavailableError
from cairn.history.axes import kinds_of
from cairn.history.boot_window import BootWindow, read_window
from cairn.models import SPEAKER_METADATA_KEY, Conversational, EventInput, Role, Scope, SessionId
from cairn.ports import Clock, Embedder, Stores
from cairn.recall import RecallQuery
from cairn.runtime.agentcore import DEFAULT_NAMESPACES, AgentCoreSessionStore
from cairn.runtime.agentcore_history import read_wire_window
from cairn.runtime.buffer import PendingTurn, TurnBuffer, check_turn, turn_role
from cairn.runtime.in_process import Appender, BatchAppender, InProcessSessionStore, Releaser
from cairn.runtime.options import SessionOptions
from cairn.runtime.release import ReleaseGate, deny_release
from cairn.runtime.run import EvidenceSink, Run
from cairn.runtime.session_store import RecalledHistory, SessionStore
from cairn.runtime.taint import TaintLedger
from cairn.runtime.tool_definitions import ToolDefinition, offered_tools

_SESSION_ID: TypeAdapter[str] = TypeAdapter(SessionId)
# Events sort by (timestamp, event id) and ids are random: turns accepted in the same
# millisecond would lose their order, so each turn is stamped at least 1 ms after the last.
_TICK = timedelta(milliseconds=1)

logger = logging.getLogger(__name__)

HistoryReader = Callable[[Scope, str, int], BootWindow]
"""Reads a session's boot window: ``(scope, session id, budget tokens) -> BootWindow``."""


class MemorySession:
    """One session's memory: buffered turns, and runs whose recall block is fixed at start."""

    def __init__(
        self,
        store: SessionStore | None,
        *,
        scope: Scope | None,
        session_id: str,
        clock: Clock | None = None,
        options: SessionOptions | None = None,
        evidence: EvidenceSink | None = None,
        on_consolidation_error: ErrorCallback | None = None,
        history: HistoryReader | None = None,
        release: Releaser | None = None,
    ) -> None:
        if store is not None and scope is None:
            raise InvalidInputError("a session with a store needs a scope (memory and actor)")
        try:
            self.session_id: str = _SESSION_ID.validate_python(session_id)
        except ValidationError:
            raise InvalidInputError(
                "session id must be 1-100 letters, digits, '-' or '_', starting with a letter "
                "or digit; pick another session id"
            ) from None
        self.scope = scope if store is not None else None
        self.options = options or SessionOptions()
        self._store = store
        self._evidence = evidence if store is not None else None
        self._on_error = on_consolidation_error
        self._history = history if store is not None else None
        self._release = release if store is not None else None
        self._clock = clock or SystemClock()
        self._last_stamp: datetime | None = None
        self._closed = False
        self._taint = TaintLedger()  # untrusted entries any run of this session showed
        self._lock = threading.Lock()
        options = self.options
        self._buffer = TurnBuffer(
            self._write, batch_size=options.batch_size, max_bytes=options.max_buffer_bytes
        )

    @classmethod
    def local(
        cls,
        stores: Stores,
        *,
        memory_id: str,
        actor_id: str,
        session_id: str,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        options: SessionOptions | None = None,
        appender: Appender | None = None,
        batch_appender: BatchAppender | None = None,
        evidence: EvidenceSink | None = None,
        on_consolidation_error: ErrorCallback | None = None,
        release: Releaser | None = None,
    ) -> MemorySession:
        """A session over ``stores`` in this process; the caller keeps ownership of them.

        No ``embedder``: recall ranks by keywords alone and lessons carry no vector. Turns
        go through ``appender`` (an extraction pipeline's ``append``: triggers count them; a
        batch at once through its ``batch_appender``), else to the store, one transaction a
        batch; ``release`` (that pipeline's) hands extraction what no trigger released at
        close. With ``evidence`` (``EvidenceStager.stage``) a completed root run stages its
        transcript for consolidation; failures go to ``on_consolidation_error``.
        """
        clock = clock or SystemClock()
        store = InProcessSessionStore(
            stores, embedder=embedder, clock=clock, appender=appender, batch=batch_appender
        )
        scope = Scope(memory_id=memory_id, actor_id=actor_id)
        chunks = stores.chunks
        history: HistoryReader | None = None
        if chunks is not None:

            def history(scope: Scope, session_id: str, budget: int) -> BootWindow:
                return read_window(stores.events, chunks, scope, session_id, budget)

        return cls(
            store,
            scope=scope,
            session_id=session_id,
            clock=clock,
            options=options,
            evidence=evidence,
            on_consolidation_error=on_consolidation_error,
            history=history,
            release=release,
        )

    @classmethod
    def agentcore(
        cls,
        client: Any,
        *,
        memory_id: str,
        actor_id: str,
        session_id: str,
        namespaces: Sequence[str] = DEFAULT_NAMESPACES,
        clock: Clock | None = None,
        options: SessionOptions | None = None,
    ) -> MemorySession:
        """A session over a cairn HTTP endpoint, through a boto3 ``bedrock-agentcore`` client
        whose ``endpoint_url`` points at it; it reads and edits only under ``namespaces``,
        templates that must name ``{actorId}``. Its boot window holds turns only, read through
        ListEvents (``cairn.runtime.agentcore_history``): the wire carries no chunks."""
        # The runtime's one edge to an AWS adapter, lazy: it needs botocore, which whoever
        # holds a client has, and the runtime installs without (docs/architecture.md).
        from cairn.aws.agentcore_client import call

        clock = clock or SystemClock()
        scope = Scope(memory_id=memory_id, actor_id=actor_id)
        store = AgentCoreSessionStore(client, call=call, clock=clock, namespaces=namespaces)
        history: HistoryReader = partial(read_wire_window, client, call)
        return cls(
            store, scope=scope, session_id=session_id, clock=clock, options=options, history=history
        )

    @classmethod
    def memoryless(
        cls, *, session_id: str = "memoryless", options: SessionOptions | None = None
    ) -> MemorySession:
        """A session that recalls nothing, offers no tools and keeps no turns."""
        return cls(None, scope=None, session_id=session_id, options=options)

    @property
    def has_memory(self) -> bool:
        """Whether this session recalls and keeps anything."""
        return self._store is not None

    @property
    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        """The memory tools every run of this session offers (none without a store)."""
        return offered_tools(self._store, curate=self.options.curate)

    @property
    def pending_turns(self) -> int:
        """Turns accepted but not yet written to the store."""
        return self._buffer.pending

    def start_run(
        self, query: str, *, parent_run_id: str | None = None, release: ReleaseGate = deny_release
    ) -> Run:
        """Start a run: recall for ``query`` (usually the user's message) now, once; the run's
        ``block`` stays the same until the run is over. A child run names its parent. A write
        or a host's sink whose input repeats untrusted memory this session showed runs only
        when ``release`` (the host's gate; default: never) releases it."""
        self._check_open()
        budget = self.options.history_budget_tokens
        window = self.boot_window(budget) if budget is not None else None
        return Run(
            store=self._store,
            scope=self.scope,
            session_id=self.session_id,
            query=query,
            options=self.options,
            clock=self._clock,
            record=self.add_turn,
            evidence=self._evidence,
            on_error=self._on_error,
            parent_run_id=parent_run_id,
            history=window,
            ledger=self._taint,
            release=release,
        )

    def boot_window(self, budget_tokens: int) -> BootWindow | None:
        """The session's whole history within ``budget_tokens``: newest turns verbatim, older
        parts as summaries (``cairn.history.boot_window``). Buffered turns are written first.
        ``None`` where the stores keep no history (no chunk store) or are unavailable; over
        HTTP, turns only (``cairn.runtime.agentcore_history``)."""
        if self._history is None or self.scope is None:
            return None
        self.flush()
        try:
            return self._history(self.scope, self.session_id, budget_tokens)
        except StoreUnavailableError:
            logger.warning("cairn: boot window skipped for this run, the store is unavailable")
            return None

    def recall(
        self, query: str, *, channels: Sequence[str] = ("records",), top_k: int = 8
    ) -> RecalledHistory:
        """Records, turns and/or chunks (``channels``) most relevant to ``query``, in one ranking
        and journalled (``cairn replay`` reproduces the block); buffered turns are written
        first. Nothing is recalled (an empty answer) in a memoryless session."""
        self._check_open()
        if self._store is None or self.scope is None:
            return RecalledHistory(block="", hits=(), journal_id=None)
        self.flush()
        kinds, asked = kinds_of(channels), RecallQuery(text=query, top_k=top_k)
        return self._store.recall_channels(self.scope, asked, self.options.policy, kinds)

    def add_turn(self, role: Role | str, text: str, *, speaker: str | None = None) -> None:
        """Accept one turn; it is written with its batch, at ``flush`` or ``close``, or at
        normal interpreter exit. Blank text is not recorded; over 100,000 characters is refused.
        If a flush this triggers fails, the error is raised and the turn stays buffered.
        ``speaker``: where several people talk (a group chat), the platform's id of who said it
        (authority is per speaker, ``cairn.authority``); ``None`` for the actor themself."""
        self._check_open()
        if self._store is None or not text.strip():
            return
        check_turn(text)
        kind = turn_role(role)
        size = len(text.encode("utf-8"))
        # Stamping and buffering together: turns recorded from several threads (a Strands
        # agent's hooks) keep distinct, increasing timestamps in buffer order.
        with self._lock:
            event = EventInput(
                session_id=self.session_id,
                event_timestamp=self._stamp(),
                payload=(Conversational(role=kind, text=text),),
                metadata={SPEAKER_METADATA_KEY: speaker} if speaker else {},
            )
            self._buffer.add(PendingTurn(event=event, token=uuid.uuid4().hex, size=size))

    def flush(self) -> int:
        """Write every buffered turn now; returns how many were written."""
        return self._buffer.flush()

    def close(self) -> None:
        """Write the buffer, hand what no trigger released to extraction, refuse further turns;
        a failed write raises (still open), a failed release is left to the idle sweep."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self._release is None or self.scope is None:
            return
        try:
            self._release(self.scope, self.session_id)
        except CairnError as exc:
            logger.warning("cairn: session left to the idle sweep (%s)", type(exc).__name__)

    def __enter__(self) -> MemorySession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _write(self, turns: Sequence[PendingTurn]) -> None:
        if self._store is None or self.scope is None:
            return  # unreachable: add_turn buffers nothing without a store
        self._store.append_batch(self.scope, [(turn.event, turn.token) for turn in turns])

    def _stamp(self) -> datetime:
        now = self._clock.now()
        # A tick apart at least: the AgentCore wire keeps event times to the millisecond, so
        # two turns closer than that would share a time there and lose their order.
        if self._last_stamp is not None and now < self._last_stamp + _TICK:
            now = self._last_stamp + _TICK
        self._last_stamp = now
        return now

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInputError(
                "this memory session is closed; open a new MemorySession to go on"
            )
