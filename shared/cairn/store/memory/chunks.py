"""``ChunkStore`` in process memory: the reference reading of the history pyramid's contract."""

from __future__ import annotations

import threading
from collections import defaultdict

from cairn.chunks import Chunk, admit, summarising
from cairn.errors import ChunkNotFoundError
from cairn.models import Scope

# scope -> session -> chunk id -> chunk
ChunkRows = defaultdict[Scope, dict[str, dict[str, Chunk]]]


def chunk_rows() -> ChunkRows:
    return defaultdict(dict)


class InMemoryHistoryGenerations:
    """``HistoryGenerations`` in memory: a count per scope of event and chunk writes, moved by
    the event and chunk stores under the backend's lock."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._counts: dict[Scope, int] = defaultdict(int)

    def bump(self, scope: Scope) -> None:
        with self._lock:
            self._counts[scope] += 1

    def generation(self, scope: Scope) -> int:
        with self._lock:
            return self._counts[scope]


class InMemoryChunkStore:
    """Chunks by scope and session, guarded by the backend's lock."""

    def __init__(
        self, lock: threading.RLock, rows: ChunkRows, generations: InMemoryHistoryGenerations
    ) -> None:
        self._lock = lock
        self._rows = rows
        self._generations = generations

    def put(self, scope: Scope, chunk: Chunk) -> Chunk:
        with self._lock:
            session = self._rows[scope].get(chunk.session_id, {})
            level = sorted(
                (c for c in session.values() if c.level == chunk.level), key=lambda c: c.from_seq
            )
            below = [session[child] for child in chunk.children if child in session]
            found = admit(
                scope,
                chunk,
                stored=session.get(chunk.chunk_id),
                last_of_level=level[-1] if level else None,
                below=below,
            )
            if found is not None:
                return found
            self._rows[scope].setdefault(chunk.session_id, {})[chunk.chunk_id] = chunk
            self._generations.bump(scope)
            return chunk

    def get_chunk(self, scope: Scope, session_id: str, chunk_id: str) -> Chunk:
        with self._lock:
            found = self._rows.get(scope, {}).get(session_id, {}).get(chunk_id)
        if found is None:
            raise ChunkNotFoundError(chunk_id)
        return found

    def list_chunks(
        self, scope: Scope, session_id: str, *, level: int | None = None
    ) -> tuple[Chunk, ...]:
        with self._lock:
            chunks = list(self._rows.get(scope, {}).get(session_id, {}).values())
        chosen = [c for c in chunks if level is None or c.level == level]
        return tuple(sorted(chosen, key=lambda c: (c.level, c.from_seq)))

    def chunk_sessions(self, scope: Scope) -> tuple[str, ...]:
        with self._lock:
            sessions = self._rows.get(scope, {})
            return tuple(sorted(sid for sid, chunks in sessions.items() if chunks))

    def forget_turn(self, scope: Scope, session_id: str, event_id: str) -> int:
        with self._lock:
            session = self._rows.get(scope, {}).get(session_id, {})
            gone = summarising(list(session.values()), event_id)
            for chunk in gone:
                del session[chunk.chunk_id]
            if gone:
                self._generations.bump(scope)
            return len(gone)

    def erase_session(self, scope: Scope, session_id: str) -> int:
        with self._lock:
            self._generations.bump(scope)
            return len(self._rows.get(scope, {}).pop(session_id, {}))

    def erase_scope(self, scope: Scope) -> int:
        with self._lock:
            sessions = self._rows.pop(scope, {})
            self._generations.bump(scope)
        return sum(len(chunks) for chunks in sessions.values())
