"""The embedded worker catches up: after a crash, after a full queue (issue 14, item 3).

The queue is in memory: a process that dies takes its queued notices with it, and a full queue
leaves rollouts staged. Before, both waited for the sweep (a quarter of an hour for an announced
rollout; 64 staged rollouts per 30-second sweep). Driven by ``run_once``: no threads, no sleeps.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.worker import RECENT
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, staging_dir, wire_embedded
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import RolloutState
from cairn.rollout.payload import RolloutNotice
from cairn.rollout.staging_keys import staging_key
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="tg:1")


def open_on(path: Path, clock: FixedClock, capacity: int = 8) -> EmbeddedExtraction:
    """One process's embedded extraction on the SQLite file at ``path`` (worker not started)."""
    return wire_embedded(
        SQLiteBackend(path, clock).stores(),
        FilesystemStagingStore(staging_dir(path)),
        model=offline_model(),
        embedder=HashingEmbedder(),
        clock=clock,
        capacity=capacity,
    )


def converse(extraction: EmbeddedExtraction, clock: FixedClock, session: str) -> None:
    """Six turns: the sixth fires the built-in count trigger and announces a rollout."""
    for n in range(5):
        say(extraction, clock, session, f"Filler {n}.")
    say(extraction, clock, session, f"My favourite city is {session}.")


def say(extraction: EmbeddedExtraction, clock: FixedClock, session: str, text: str) -> None:
    turn = Conversational(role=Role.USER, text=text)
    event = EventInput(session_id=session, event_timestamp=clock.now(), payload=(turn,))
    extraction.append(SCOPE, event)
    clock.advance(timedelta(seconds=1))


@pytest.mark.fault("publish", "killed-after", "sqlite")
def test_a_restarted_worker_extracts_what_a_dead_process_had_queued_at_once(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    path = tmp_path / "cairn.db"
    dying = open_on(path, clock)
    converse(dying, clock, "Porto")
    rollouts = dying.stores.rollouts
    assert rollouts is not None
    assert [r.state for r in rollouts.list_pending(SCOPE)] == [RolloutState.ANNOUNCED]
    dying.stores.close()  # the process dies: its queue (and the notice in it) is gone

    restarted = open_on(path, clock)
    try:
        handled = restarted.worker.run_once()  # the same instant: no sweep is due yet

        assert [h.status for h in handled] == ["consumed"]
        contents = [v.content for v in restarted.stores.records.list_records(SCOPE).items]
        assert "The user's favourite city is Porto." in contents
    finally:
        restarted.close()


def test_a_backlog_past_the_queue_drains_at_the_speed_of_the_work(tmp_path: Path) -> None:
    clock = FixedClock()
    extraction = open_on(tmp_path / "cairn.db", clock, capacity=2)
    try:
        extraction.worker.run_once()  # started
        cities = ["Porto", "Lisbon", "Braga", "Faro", "Evora", "Coimbra"]
        for city in cities:
            converse(extraction, clock, city)
        rollouts = extraction.stores.rollouts
        assert rollouts is not None
        states = sorted(r.state for r in rollouts.list_pending(SCOPE))
        assert states.count(RolloutState.STAGED) == 4  # the queue held two

        handled = extraction.worker.run_once()  # no clock advance: no sweep is due

        assert [h.status for h in handled] == ["consumed"] * 6
        assert rollouts.list_pending(SCOPE) == ()
    finally:
        extraction.close()


def test_the_worker_keeps_only_its_recent_outcomes(tmp_path: Path) -> None:
    clock = FixedClock()
    extraction = open_on(tmp_path / "cairn.db", clock, capacity=RECENT * 2)
    try:
        converse(extraction, clock, "Porto")
        (consumed,) = extraction.worker.run_once()
        notice = RolloutNotice.of(
            SCOPE, consumed.rollout_id, staging_key(SCOPE, consumed.rollout_id)
        )
        for _ in range(RECENT + 50):  # duplicate deliveries, each one outcome
            extraction.worker.notifier.announce(notice)

        handled = extraction.worker.run_once()

        assert [h.status for h in handled] == ["duplicate"] * (RECENT + 50)
        assert len(extraction.worker.processed) == RECENT
    finally:
        extraction.close()
