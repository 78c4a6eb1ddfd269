"""Embedding many records shows a bar on a terminal, and nothing in a pipe."""

from __future__ import annotations

import io

from cairn.changes import NewRecord
from cairn.cli.progress import BATCH, embed_with_progress
from cairn.local.memory import with_vectors
from cairn.models import Source, SourceKind
from cairn.testing import HashingEmbedder


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _records(n: int) -> list[NewRecord]:
    return [
        NewRecord(
            namespace="/facts/a/",
            content=f"private fact number {i}",
            sources=(Source(kind=SourceKind.USER),),
        )
        for i in range(n)
    ]


def test_many_records_show_a_bar_of_counts_on_a_terminal_and_keep_their_order() -> None:
    records = _records(3 * BATCH + 5)
    screen = Terminal()
    shown = embed_with_progress(HashingEmbedder(), records, stream=screen)
    assert shown == with_vectors(HashingEmbedder(), records)
    drawn = screen.getvalue()
    assert "embedding" in drawn
    assert f"0/{len(records)}" in drawn
    assert f"{BATCH}/{len(records)}" in drawn  # redrawn as batches complete
    assert "private fact" not in drawn  # counts only, never content


def test_a_pipe_or_a_single_batch_shows_nothing() -> None:
    pipe = io.StringIO()
    embed_with_progress(HashingEmbedder(), _records(3 * BATCH), stream=pipe)
    assert pipe.getvalue() == ""
    screen = Terminal()
    embed_with_progress(HashingEmbedder(), _records(BATCH), stream=screen)
    assert screen.getvalue() == ""


def test_a_long_loop_shows_a_bar_of_counts_once_it_has_run_a_while_and_keeps_every_item() -> None:
    from cairn.cli.progress import counted

    items = [f"private fact {i}" for i in range(50)]
    screen = Terminal()
    assert list(counted(items, label="exporting", stream=screen, after_seconds=0)) == items
    drawn = screen.getvalue()
    assert "exporting" in drawn
    assert "0/50" in drawn  # the count of all of them (redraws are throttled by tqdm)
    assert "private fact" not in drawn  # counts only, never content


def test_a_quick_loop_or_a_pipe_shows_nothing() -> None:
    from cairn.cli.progress import counted

    items = list(range(50))
    screen = Terminal()
    assert list(counted(items, label="exporting", stream=screen)) == items  # well under 1 s
    assert screen.getvalue() == ""
    pipe = io.StringIO()
    assert list(counted(items, label="exporting", stream=pipe, after_seconds=0)) == items
    assert pipe.getvalue() == ""
