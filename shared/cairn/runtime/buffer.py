"""``TurnBuffer``: a session's turns, held until a batch is full, then written in order.

A buffer flushes when it holds ``batch_size`` turns or ``max_bytes`` of turn text, when asked,
and when the process exits normally (``atexit``): a turn the buffer accepted is written unless
the process is killed or the store refuses it. A flush writes its turns in batches of at most
``MAX_APPEND_BATCH``, oldest first, each batch one write (one transaction where the store has
them). A failed write leaves its whole batch and every later turn buffered, in order, for the
next flush; each turn carries its token, so a store that saw part of a failed batch stores only
the rest when it is written again, and a turn already written is never written twice.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from cairn.errors import InvalidInputError
from cairn.models import EventInput, Role
from cairn.ports import MAX_APPEND_BATCH

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """One accepted turn: the event to append, its idempotency token, its text size in bytes."""

    event: EventInput
    token: str
    size: int


Writer = Callable[[Sequence[PendingTurn]], None]
"""Writes a batch of turns, in order, durably (all of them, or raises)."""

# Buffers holding unwritten turns, flushed at interpreter exit. A buffer is held here only
# while it has pending turns, so an idle session can still be garbage-collected.
_PENDING: set[TurnBuffer] = set()
_PENDING_LOCK = threading.Lock()
_EXIT_HOOK_INSTALLED = False


def _flush_pending_at_exit() -> None:
    with _PENDING_LOCK:
        buffers = list(_PENDING)
    for buffer in buffers:
        try:
            buffer.flush()
        except Exception as exc:
            # Never content: only how many turns could not be written, and the error's type.
            logger.error(
                "cairn: %d buffered turn(s) could not be written at exit (%s)",
                buffer.pending,
                type(exc).__name__,
            )


def _track(buffer: TurnBuffer, pending: bool) -> None:
    global _EXIT_HOOK_INSTALLED
    with _PENDING_LOCK:
        if pending:
            _PENDING.add(buffer)
            if not _EXIT_HOOK_INSTALLED:
                atexit.register(_flush_pending_at_exit)
                _EXIT_HOOK_INSTALLED = True
        else:
            _PENDING.discard(buffer)


class TurnBuffer:
    """Turns accepted but not yet written; thread-safe; ``write`` appends a batch durably."""

    def __init__(self, write: Writer, *, batch_size: int, max_bytes: int) -> None:
        self._write = write
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._turns: deque[PendingTurn] = deque()
        self._bytes = 0
        self._lock = threading.RLock()

    @property
    def pending(self) -> int:
        """How many accepted turns are not written yet."""
        return len(self._turns)

    @property
    def pending_bytes(self) -> int:
        """UTF-8 bytes of the text of the turns not written yet."""
        return self._bytes

    def add(self, turn: PendingTurn) -> int:
        """Accept ``turn``; flush if the batch or the byte bound is reached. Returns how many
        turns this call wrote. If that flush fails, the error is raised and ``turn`` stays
        accepted (buffered for the next flush)."""
        with self._lock:
            self._turns.append(turn)
            self._bytes += turn.size
            _track(self, pending=True)
            if len(self._turns) >= self._batch_size or self._bytes >= self._max_bytes:
                return self.flush()
            return 0

    def flush(self) -> int:
        """Write every pending turn, oldest first, a batch at a time; returns how many were
        written."""
        written = 0
        with self._lock:
            while self._turns:
                batch = list(islice(self._turns, MAX_APPEND_BATCH))
                self._write(batch)
                for turn in batch:
                    self._turns.popleft()
                    self._bytes -= turn.size
                written += len(batch)
            _track(self, pending=False)
        return written


def turn_role(role: Role | str) -> Role:
    """``role`` as a ``Role`` (case-insensitive); an unknown one is refused."""
    if isinstance(role, Role):
        return role
    try:
        return Role(role.upper())
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise InvalidInputError(f"a turn's role must be one of {allowed}") from None


MAX_TURN_CHARS = 100_000


def check_turn(text: str) -> None:
    """Refuse a turn over ``MAX_TURN_CHARS`` characters, saying how to fix it."""
    if len(text) > MAX_TURN_CHARS:
        raise InvalidInputError(
            f"a turn holds at most {MAX_TURN_CHARS} characters, this one {len(text)}; "
            "split it across turns"
        )
