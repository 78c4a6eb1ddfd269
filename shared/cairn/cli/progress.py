"""Progress on stderr for the command's long steps, drawn by ``tqdm``.

Embedding runs at a few dozen texts a second on a laptop core, so anything past one batch
takes over a second: ``embed_texts`` embeds in batches and shows a bar on a terminal (``tqdm``
hides it when stderr is not one, so scripts and pipes see nothing); ``embed_with_progress``
gives records their vectors that way. ``index_build_bar`` shows the first recall of a large
scope building its recall index; ``counted`` any other loop over many records (export, import's
writes), at once over a large scope's worth and otherwise once it has run a second, and
``listed`` a listing of many records (``ls records``, ``as-of``, ``export``). A bar names only
counts, never content.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from cairn.changes import NewRecord, Vector
    from cairn.models import RecordVersion, Scope
    from cairn.ports import Embedder, Stores

BATCH = 32


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    label: str = "embedding",
    unit: str = "record",
    stream: TextIO | None = None,
) -> list[Vector]:
    """The vector of each text, in order, batch by batch, with a bar on ``stream`` (stderr)
    when there is more than one batch."""
    from cairn.changes import Vector

    def embedded(batch: Sequence[str]) -> list[Vector]:
        if not batch:
            return []
        rows = embedder.embed(list(batch))
        return [
            Vector(embedder=embedder.identity, values=tuple(float(x) for x in row)) for row in rows
        ]

    if len(texts) <= BATCH:
        return embedded(texts)
    from tqdm import tqdm

    done: list[Vector] = []
    with tqdm(
        total=len(texts),
        desc=label,
        unit=unit,
        file=stream or sys.stderr,
        disable=None,  # shown only on a terminal
        leave=False,
        mininterval=0,  # one redraw a batch: each takes about a second anyway
    ) as bar:
        for start in range(0, len(texts), BATCH):
            batch = embedded(texts[start : start + BATCH])
            done.extend(batch)
            bar.update(len(batch))
    return done


def embed_with_progress(
    embedder: Embedder,
    records: Sequence[NewRecord],
    *,
    label: str = "embedding",
    stream: TextIO | None = None,
) -> list[NewRecord]:
    """``records``, each carrying the vector of its content (as
    ``cairn.local.memory.with_vectors``), embedded by ``embed_texts``."""
    vectors = embed_texts(embedder, [r.content for r in records], label=label, stream=stream)
    return [
        record.model_copy(update={"vector": vector})
        for record, vector in zip(records, vectors, strict=True)
    ]


# A scope this large takes most of a second to index on one core (the two passes cost ~30 us a
# row together, measured at 100k records; more with vectors): its bar shows at once. A smaller
# one shows a bar only if its build is still running after ``SLOW_BUILD_SECONDS`` (a loaded
# machine), so a quick recall draws nothing and does not even import tqdm.
LARGE_SCOPE = 20_000
SLOW_BUILD_SECONDS = 1.0


@contextmanager
def index_build_bar(*, stream: TextIO | None = None) -> Iterator[None]:
    """Within the block, a recall index build draws a bar of its two passes on ``stream``
    (stderr) when that is a terminal and the scope is large or the build slow, and the passage
    index's embedding of turns (``--with-history``) a bar of its own; stdout is never
    touched."""
    from cairn.recall.index.progress import reporting

    screen = stream or sys.stderr
    if not screen.isatty():
        yield
        return
    bar: Any = None
    began: float | None = None

    def heard(done: int, total: int) -> None:
        nonlocal bar, began
        if bar is None:
            began = time.monotonic() if began is None else began
            if total < 2 * LARGE_SCOPE and time.monotonic() - began < SLOW_BUILD_SECONDS:
                return
            from tqdm import tqdm

            bar = tqdm(
                total=total,
                desc=f"indexing {total // 2:,} records",
                file=screen,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}",
            )
        bar.update(done - bar.n)

    embedding: Any = None

    def embedded(done: int, total: int) -> None:  # reported only past one step: seconds
        nonlocal embedding
        if embedding is None:
            from tqdm import tqdm

            embedding = tqdm(
                total=total,
                desc=f"embedding {total:,} passages",
                unit="text",
                file=screen,
                leave=False,
            )
        embedding.update(done - embedding.n)

    try:
        with reporting(heard, embedding=embedded):
            yield
    finally:
        for shown in (bar, embedding):
            if shown is not None:
                shown.close()


T = TypeVar("T")


def counted(
    items: Sequence[T],
    *,
    label: str,
    unit: str = "record",
    stream: TextIO | None = None,
    after_seconds: float = SLOW_BUILD_SECONDS,
) -> Iterator[T]:
    """``items`` one by one; on a terminal (``stream``, stderr), a bar of how many are done:
    from the start when there are ``LARGE_SCOPE`` or more (as a large scope's index build
    shows at once, whatever the machine's speed), otherwise once the loop has run
    ``after_seconds``. A shorter loop that ends sooner draws nothing."""
    screen = stream or sys.stderr
    if not screen.isatty():
        yield from items
        return
    began = time.monotonic()
    wait = 0.0 if len(items) >= LARGE_SCOPE else after_seconds
    bar: Any = None
    try:
        for done, item in enumerate(items):
            if bar is None and time.monotonic() - began >= wait:
                from tqdm import tqdm

                bar = tqdm(
                    total=len(items), initial=done, desc=label, unit=unit, file=screen, leave=False
                )
            elif bar is not None:
                bar.update(done - bar.n)
            yield item
        if bar is not None:
            bar.update(len(items) - bar.n)
    finally:
        if bar is not None:
            bar.close()


def listed(
    stores: Stores,
    scope: Scope,
    *,
    label: str = "reading",
    stream: TextIO | None = None,
    after_seconds: float = SLOW_BUILD_SECONDS,
    **filters: Any,
) -> list[RecordVersion]:
    """``cairn.local.store.all_records(stores, scope, **filters)``, page by page; on a terminal,
    once the listing has run ``after_seconds``, a bar of the records read so far (no total: a
    listing cannot count ahead)."""
    from cairn.ports import MAX_PAGE_SIZE

    screen = stream or sys.stderr
    began = time.monotonic()
    bar: Any = None
    found: list[RecordVersion] = []
    cursor: str | None = None
    try:
        while True:
            page = stores.records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor, **filters)
            found.extend(page.items)
            cursor = page.next_cursor
            if bar is None and screen.isatty() and time.monotonic() - began >= after_seconds:
                from tqdm import tqdm

                bar = tqdm(desc=label, unit="record", file=screen, leave=False)
            if bar is not None:
                bar.update(len(found) - bar.n)
            if cursor is None:
                return found
    finally:
        if bar is not None:
            bar.close()
