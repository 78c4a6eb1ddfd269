"""A journal entry filed before ``channels``/``shown`` existed keeps its chain digest."""

from __future__ import annotations

from datetime import UTC, datetime

from cairn.journal_chain import chain_digest
from cairn.models import JournalEntry, SelectedEntry, ShownHit

ENTRY = JournalEntry(
    journal_id="jrn-1",
    memory_id="m1",
    actor_id="a1",
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
    query="tea",
    block_digest="0" * 64,
    selected=(
        SelectedEntry(record_id="mem-" + "a" * 36, version=1, content_digest="1" * 64, score=0.5),
    ),
    sequence=3,
    previous="2" * 64,
)
# The digest this entry had when chains were first filed (computed before the fields existed).
FILED = "2904d9d0e312e1a513971d9ccc96d7556c56eb7677e33720ebbcb21623472835"


def test_an_entry_without_channels_keeps_the_digest_it_was_filed_with() -> None:
    assert chain_digest(ENTRY) == FILED


def test_channels_and_shown_are_in_the_digest_once_set() -> None:
    shown = ShownHit(kind="turns", ref="ev-1", session_id="s1", digest="3" * 64, score=0.4)
    with_channels = ENTRY.model_copy(update={"channels": ("turns",), "shown": (shown,)})
    assert chain_digest(with_channels) != FILED
    moved = shown.model_copy(update={"in_period": True})
    assert chain_digest(with_channels.model_copy(update={"shown": (moved,)})) != chain_digest(
        with_channels
    )
