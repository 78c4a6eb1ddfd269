"""Progress on stderr for the command's long steps, drawn by ``tqdm``.

Embedding runs at a few dozen texts a second on a laptop core, so anything past one batch
takes over a second: ``embed_with_progress`` embeds in batches and shows a bar on a terminal
(``tqdm`` hides it when stderr is not one, so scripts and pipes see nothing). The bar names
only counts, never content.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from cairn.changes import NewRecord
    from cairn.ports import Embedder

BATCH = 32


def embed_with_progress(
    embedder: Embedder,
    records: Sequence[NewRecord],
    *,
    label: str = "embedding",
    stream: TextIO | None = None,
) -> list[NewRecord]:
    """``records`` with their vectors (``cairn.local.memory.with_vectors``), batch by batch,
    with a bar on ``stream`` (stderr) when there is more than one batch."""
    from cairn.local.memory import with_vectors

    if len(records) <= BATCH:
        return with_vectors(embedder, records)
    from tqdm import tqdm

    done: list[NewRecord] = []
    with tqdm(
        total=len(records),
        desc=label,
        unit="record",
        file=stream or sys.stderr,
        disable=None,  # shown only on a terminal
        leave=False,
        mininterval=0,  # one redraw a batch: each takes about a second anyway
    ) as bar:
        for start in range(0, len(records), BATCH):
            batch = with_vectors(embedder, records[start : start + BATCH])
            done.extend(batch)
            bar.update(len(batch))
    return done
