"""Progress on stderr for the command's long steps, drawn by ``tqdm``.

Embedding runs at a few dozen texts a second on a laptop core, so anything past one batch
takes over a second: ``embed_texts`` embeds in batches and shows a bar on a terminal (``tqdm``
hides it when stderr is not one, so scripts and pipes see nothing); ``embed_with_progress``
gives records their vectors that way. The bar names only counts, never content.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from cairn.changes import NewRecord, Vector
    from cairn.ports import Embedder

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
