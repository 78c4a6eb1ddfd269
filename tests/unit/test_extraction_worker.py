"""The embedded worker: a background thread that extracts as triggers fire, bounded, and
driven deterministically in tests (``run_once``) or waited for (``drain``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, wire_embedded
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import RolloutState
from cairn.store.memory import InMemoryBackend

SCOPE = Scope(memory_id="default", actor_id="tg:1")


def _wired(tmp_path: Path, clock: FixedClock, capacity: int) -> EmbeddedExtraction:
    return wire_embedded(
        InMemoryBackend(clock).stores(),
        FilesystemStagingStore(tmp_path / "staging"),
        model=offline_model(),
        embedder=HashingEmbedder(),
        clock=clock,
        capacity=capacity,
    )


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def wired(tmp_path: Path, clock: FixedClock) -> Iterator[EmbeddedExtraction]:
    found = _wired(tmp_path, clock, capacity=8)
    yield found
    found.close()


def _say(extraction: EmbeddedExtraction, clock: FixedClock, text: str, session: str = "s1") -> None:
    extraction.append(
        SCOPE,
        EventInput(
            session_id=session,
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=text),),
        ),
    )
    clock.advance(timedelta(seconds=1))


def _contents(extraction: EmbeddedExtraction) -> list[str]:
    return [v.content for v in extraction.stores.records.list_records(SCOPE).items]


def test_the_thread_extracts_in_the_background_and_drain_waits_for_it(
    wired: EmbeddedExtraction, clock: FixedClock
) -> None:
    wired.worker.start()
    for n in range(5):
        _say(wired, clock, f"Small talk number {n}.")
    _say(wired, clock, "I prefer green tea in the afternoon.")

    wired.worker.drain()

    assert "The user prefers green tea in the afternoon." in _contents(wired)
    wired.worker.stop()


def test_a_full_queue_leaves_the_rollout_staged_until_the_queue_drains_not_the_sweep(
    tmp_path: Path, clock: FixedClock
) -> None:
    # Issue 14, item 3: a backlog drains at the speed of the work; before, the staged rollout
    # waited for the sweep (STALL_AFTER, then 64 rollouts every 30 s).
    wired = _wired(tmp_path, clock, capacity=1)
    try:
        wired.worker.run_once()  # the timer's first sweep: nothing yet
        for session, statement in (("s1", "I prefer green tea."), ("s2", "My city is Porto.")):
            for n in range(5):
                _say(wired, clock, f"Filler {n}.", session)
            _say(wired, clock, statement, session)
        rollouts = wired.stores.rollouts
        assert rollouts is not None
        states = sorted(r.state for r in rollouts.list_pending(SCOPE))
        assert states == [RolloutState.ANNOUNCED, RolloutState.STAGED]

        assert [c.status for c in wired.worker.run_once()] == ["consumed", "consumed"]

        assert rollouts.list_pending(SCOPE) == ()
        contents = _contents(wired)
        assert "The user prefers green tea." in contents
        assert "The user's city is Porto." in contents
    finally:
        wired.close()


def test_stop_ends_the_thread_and_later_announcements_wait_in_the_queue(
    wired: EmbeddedExtraction, clock: FixedClock
) -> None:
    wired.worker.start()
    wired.worker.stop()
    for n in range(6):
        _say(wired, clock, f"I prefer option {n}.")

    assert _contents(wired) == []
    assert [c.status for c in wired.worker.run_once()] == ["consumed"]


def test_open_embedded_extracts_into_the_sqlite_file_before_it_closes(
    tmp_path: Path, clock: FixedClock
) -> None:
    from cairn.local.system import open_embedded, staging_dir
    from cairn.store.sqlite import SQLiteBackend

    path = tmp_path / "cairn.db"
    extraction = open_embedded(path, model=offline_model(), embedder=HashingEmbedder(), clock=clock)
    for n in range(5):
        _say(extraction, clock, f"Small talk number {n}.")
    _say(extraction, clock, "My favourite editor is Helix.")
    extraction.close()  # waits for the worker

    reopened = SQLiteBackend(path, clock).stores()
    try:
        contents = [v.content for v in reopened.records.list_records(SCOPE).items]
        assert "The user's favourite editor is Helix." in contents
    finally:
        reopened.close()
    assert list(staging_dir(path).rglob("ro-*")) == []  # consumed payloads are deleted
