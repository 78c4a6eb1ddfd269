"""Embedding many records shows a bar on a terminal, and nothing in a pipe."""

from __future__ import annotations

import io
from pathlib import Path

from cairn.changes import NewRecord
from cairn.cli.progress import BATCH, embed_with_progress
from cairn.clock import FixedClock
from cairn.local.memory import with_vectors
from cairn.models import Scope, Source, SourceKind
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


def test_a_loop_over_a_large_scope_shows_its_bar_at_once_however_quick() -> None:
    from cairn.cli.progress import LARGE_SCOPE, counted

    items = list(range(LARGE_SCOPE))
    screen = Terminal()
    assert list(counted(items, label="exporting", stream=screen, after_seconds=3600)) == items
    drawn = screen.getvalue()
    assert "exporting" in drawn
    assert f"/{LARGE_SCOPE}" in drawn
    one_short = Terminal()
    assert list(counted(items[1:], label="exporting", stream=one_short, after_seconds=3600))
    assert one_short.getvalue() == ""  # under the size, the bar waits for the loop's time


def test_a_quick_loop_or_a_pipe_shows_nothing() -> None:
    from cairn.cli.progress import counted

    items = list(range(50))
    screen = Terminal()
    quick = counted(items, label="exporting", stream=screen, after_seconds=3600)
    assert list(quick) == items  # ends long before its time, whatever the machine's speed
    assert screen.getvalue() == ""
    pipe = io.StringIO()
    assert list(counted(items, label="exporting", stream=pipe, after_seconds=0)) == items
    assert pipe.getvalue() == ""


def test_a_long_listing_shows_records_read_and_returns_every_page(tmp_path: Path) -> None:
    from cairn.changes import MAX_CHANGES_PER_APPLY, Create
    from cairn.cli.progress import listed
    from cairn.local.store import all_records
    from cairn.ports import MAX_PAGE_SIZE
    from cairn.store.sqlite import SQLiteBackend

    scope = Scope(memory_id="default", actor_id="a")
    stores = SQLiteBackend(tmp_path / "s.db", FixedClock()).stores()
    try:
        records = _records(2 * MAX_PAGE_SIZE + 7)
        for start in range(0, len(records), MAX_CHANGES_PER_APPLY):
            batch = records[start : start + MAX_CHANGES_PER_APPLY]
            stores.records.apply(scope, [Create(record=r) for r in batch])
        screen, pipe = Terminal(), Terminal()
        shown = listed(stores, scope, label="reading", stream=screen, after_seconds=0)
        assert shown == all_records(stores, scope)
        assert len(shown) == len(records)
        drawn = screen.getvalue()
        assert "reading" in drawn
        assert "record [" in drawn  # a count of records read (tqdm throttles its redraws)
        assert "private fact" not in drawn
        # A listing that ends before its time draws nothing (an hour: whatever the machine's
        # speed; on a loaded one a page has taken over the default second).
        assert listed(stores, scope, stream=pipe, after_seconds=3600) == shown
        assert pipe.getvalue() == ""
    finally:
        stores.close()
