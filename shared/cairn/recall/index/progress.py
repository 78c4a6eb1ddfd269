"""Who hears how far a recall index build has come: the caller that can show it.

Building a scope's snapshot makes two passes over its live heads, each Python per row: reading
them from the store (``IndexRowReader.index_rows``) and tokenising them (``build_snapshot``).
At 100k records that is seconds, on the first recall of every process. A caller that can show
progress (the CLI, on a terminal) wraps its recall in ``reporting(progress)``; the index reports
the two passes as one count of twice the rows, the read first. A build that reads and tokenises
each row in one pass (the persisted snapshot's, ``cairn.recall.index.streamed``) reports on the
same count, two steps a row.

A context variable, not a parameter of ``recall``: the index is a shared object found through
the backend (``index_of``), and whether a recall builds anything is decided deep inside it, by
the store's generations. Nothing else reads it, and a recall outside ``reporting`` pays one
lookup. ``recall --with-history`` also embeds every turn the process has not seen, at a few
dozen a second: that is reported apart (``embedding_listener``). A recall on the uncached path
(``TransientRecallIndex``: an as-of recall, a backend without generations) reports nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from cairn.ports import BuildProgress

__all__ = ["BuildProgress", "build_pass", "build_passes", "embedding_listener", "reporting"]

_LISTENER: ContextVar[BuildProgress | None] = ContextVar("cairn_index_progress", default=None)
_EMBEDDING: ContextVar[BuildProgress | None] = ContextVar("cairn_embedding", default=None)


@contextmanager
def reporting(progress: BuildProgress, *, embedding: BuildProgress | None = None) -> Iterator[None]:
    """Within the block, every recall index build in this context reports to ``progress``, and
    the passage index's embedding of passages it has not seen to ``embedding`` (texts embedded,
    texts to embed)."""
    token = _LISTENER.set(progress)
    embedding_token = _EMBEDDING.set(embedding)
    try:
        yield
    finally:
        _EMBEDDING.reset(embedding_token)
        _LISTENER.reset(token)


def embedding_listener() -> BuildProgress | None:
    """Who hears the passage index embed, if anyone (``reporting(..., embedding=)``)."""
    return _EMBEDDING.get()


def build_passes() -> tuple[BuildProgress | None, BuildProgress | None]:
    """The (read, tokenise) listeners of a build starting now, as one count of 2 x rows steps;
    ``(None, None)`` when no one listens."""
    listener = _LISTENER.get()
    if listener is None:
        return None, None
    heard = listener

    def read(done: int, total: int) -> None:
        heard(done, 2 * total)

    def tokenise(done: int, total: int) -> None:
        heard(total + done, 2 * total)

    return read, tokenise


def build_pass() -> BuildProgress | None:
    """The listener of a build that reads and tokenises each row in one pass, on the same
    count of 2 x rows steps (a row built is both passes done for it); ``None`` when no one
    listens."""
    listener = _LISTENER.get()
    if listener is None:
        return None
    heard = listener

    def both(done: int, total: int) -> None:
        heard(2 * done, 2 * total)

    return both
