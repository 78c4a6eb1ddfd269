"""Progress on stderr for the benchmark's long steps, drawn by ``tqdm``: shown only when
stderr is a terminal (``disable=None``), never with ``--quiet``. A bar names counts only."""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm


def bar(total: int, label: str, unit: str, *, quiet: bool, stream: TextIO | None = None) -> tqdm:
    """A bar of ``total`` ``unit``s labelled ``label`` (a context manager: ``update(n)``)."""
    return tqdm(
        total=total,
        desc=label,
        unit=unit,
        file=stream or sys.stderr,
        disable=True if quiet else None,
        leave=False,
        mininterval=0,  # one redraw an update: each step (256 texts, a conversation) is seconds
    )
