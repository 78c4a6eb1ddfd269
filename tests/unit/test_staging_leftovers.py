"""No conversation text left in the staging folder by a killed process (issue 14, item 4).

Leftovers are made as a SIGKILL at the wrong moment leaves them: a temporary file whose put
never reached its link, and the payload of a rollout consumed just before the process died.
Opening the store again removes them and keeps what is still needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.delivery import consume
from cairn.local import offline_model
from cairn.local.api import serve_embedded
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.leftovers import STALE_AFTER, LeftoversRemoved, remove_leftovers
from cairn.local.system import EmbeddedExtraction, open_embedded, staging_dir, wire_embedded
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import Rollout, RolloutState
from cairn.rollout.payload import RolloutNotice
from cairn.rollout.staging_keys import staging_key
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="tg:1")


def open_on(path: Path, clock: FixedClock) -> EmbeddedExtraction:
    return wire_embedded(
        SQLiteBackend(path, clock).stores(),
        FilesystemStagingStore(staging_dir(path)),
        model=offline_model(),
        embedder=HashingEmbedder(),
        clock=clock,
    )


def converse(extraction: EmbeddedExtraction, clock: FixedClock, session: str) -> None:
    for n in range(5):
        say(extraction, clock, session, f"Filler {n}.")
    say(extraction, clock, session, f"My favourite city is {session}.")


def say(extraction: EmbeddedExtraction, clock: FixedClock, session: str, text: str) -> None:
    turn = Conversational(role=Role.USER, text=text)
    extraction.append(
        SCOPE, EventInput(session_id=session, event_timestamp=clock.now(), payload=(turn,))
    )
    clock.advance(timedelta(seconds=1))


def aged(path: Path, by: timedelta) -> None:
    then = time.time() - by.total_seconds()
    os.utime(path, (then, then))


# A put stopped half way, in a live process of its own: its temporary file written and locked.
PUT_UNDER_WAY = """
import sys
from pathlib import Path
from cairn.local.fs_staging import _synced_temp

with _synced_temp(Path(sys.argv[1]), sys.argv[2], b"half a payl") as temp:
    print(temp.name, flush=True)
    sys.stdin.readline()
"""


@contextmanager
def put_under_way(directory: Path, rollout_id: str) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """The temporary file of a put under way in another process, and that process."""
    directory.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(  # noqa: S603  # our own interpreter
        [sys.executable, "-c", PUT_UNDER_WAY, str(directory), rollout_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield directory / process.stdout.readline().strip(), process
    finally:
        process.kill()
        process.wait()


def staged_files(path: Path) -> set[str]:
    return {p.name for p in staging_dir(path).rglob("*") if p.is_file()}


@pytest.mark.fault("staging", "killed-before", "sqlite")
def test_reopening_removes_what_a_killed_process_left_and_keeps_pending_payloads(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    path = tmp_path / "cairn.db"
    first = open_on(path, clock)
    converse(first, clock, "Porto")
    (consumed,) = first.worker.run_once()
    rollouts = first.stores.rollouts
    assert rollouts is not None
    # Killed between marking it consumed and deleting its payload: the payload is back.
    payload = b'{"the": "conversation text"}'
    first.pipeline.staging.put(SCOPE, consumed.rollout_id, payload)
    converse(first, clock, "Lisbon")  # announced, never consumed: killed with it queued
    (pending,) = rollouts.list_pending(SCOPE)
    directory = staging_dir(path) / staging_key(SCOPE, pending.rollout_id).rsplit("/", 1)[0]
    stale = directory / f".{pending.rollout_id}.0123456789abcdef.tmp"  # a put cut short
    stale.write_bytes(b"half a payl")
    aged(stale, STALE_AFTER * 2)
    first.stores.close()  # the process dies

    with put_under_way(directory, pending.rollout_id) as (fresh, _):
        stores = SQLiteBackend(path, clock).stores()
        reopened = serve_embedded(  # as `cairn serve` opens it; the worker is left to the test
            stores, path, embedder=None, model=offline_model(), clock=clock, start_worker=False
        )
        try:
            left = staged_files(path)
        finally:
            reopened.close()

    assert consumed.rollout_id not in left
    assert stale.name not in left
    assert fresh.name in left  # another process's put may be under way: not touched
    assert pending.rollout_id in left  # still needed (the catch-up extracts it)


@pytest.mark.fault("extraction", "duplicate", "sqlite")
def test_a_duplicate_delivery_of_a_consumed_rollout_deletes_the_payload_left_behind(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    path = tmp_path / "cairn.db"
    extraction = open_on(path, clock)
    try:
        converse(extraction, clock, "Porto")
        (consumed,) = extraction.worker.run_once()
        rid = consumed.rollout_id
        extraction.pipeline.staging.put(SCOPE, rid, b'{"the": "conversation text"}')

        again = consume(RolloutNotice.of(SCOPE, rid, staging_key(SCOPE, rid)), extraction.consumer)

        assert again.status == "duplicate"
        assert rollouts_state(extraction, rid) is RolloutState.CONSUMED
        assert rid not in staged_files(path)
    finally:
        extraction.close()


def rollouts_state(extraction: EmbeddedExtraction, rid: str) -> RolloutState:
    rollouts = extraction.stores.rollouts
    assert rollouts is not None
    return rollouts.get(SCOPE, rid).state


def test_open_embedded_removes_a_stale_temporary_file_before_its_worker_starts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cairn.db"
    directory = staging_dir(path) / "rollouts" / ("0" * 32)
    directory.mkdir(parents=True)
    stale = directory / ".ro-1.0123456789abcdef.tmp"
    stale.write_bytes(b"half a payl")
    aged(stale, STALE_AFTER * 2)

    opened = open_embedded(path, model=offline_model(), embedder=None, clock=FixedClock())
    opened.close()

    assert not stale.exists()


@pytest.mark.parametrize("meanwhile", ["deleted", "erased"])
def test_a_payload_gone_while_the_tidy_runs_is_passed_over(tmp_path: Path, meanwhile: str) -> None:
    # Another process on the store goes on while this one opens it: its worker deletes the
    # payload it consumed, or an erase removes the scope. The tidy meets a listed file gone.
    root = tmp_path / "staging"
    other_process = FilesystemStagingStore(root)
    for rollout_id in ("ro-a", "ro-b"):
        other_process.put(SCOPE, rollout_id, b'{"the": "conversation text"}')
    asked: list[str] = []

    def find_while_another_process_runs(rollout_id: str) -> list[Rollout]:
        asked.append(rollout_id)
        if meanwhile == "erased":
            other_process.erase_scope(SCOPE)
        else:
            other_process.delete(SCOPE, "ro-b" if rollout_id == "ro-a" else "ro-a")
        return []  # neither rollout is stored yet: fresh, so kept

    removed = remove_leftovers(root, find_while_another_process_runs)

    assert removed == LeftoversRemoved()
    assert len(asked) == 1  # the first file was looked up; the second was gone by its turn


def test_a_put_killed_half_way_leaves_a_temporary_file_the_next_tidy_deletes_at_once(
    tmp_path: Path,
) -> None:
    root = tmp_path / "staging"
    directory = root / "rollouts" / ("0" * 32)
    with put_under_way(directory, "ro-1") as (temp, process):
        assert remove_leftovers(root, lambda _: []) == LeftoversRemoved()  # alive: kept
        assert temp.exists()
        process.kill()  # SIGKILL: the put never reaches its link or its unlink
        process.wait()
        assert temp.exists()

        removed = remove_leftovers(root, lambda _: [])  # a second old, not ten minutes

    assert removed == LeftoversRemoved(temporary=1)
    assert not temp.exists()


def test_an_empty_temporary_file_waits_for_its_age(tmp_path: Path) -> None:
    # Created by a put that has not taken its lock yet, or by one killed before writing a byte:
    # nothing in it to leak, and no telling which, so it is kept until it is stale.
    root = tmp_path / "staging"
    directory = root / "rollouts" / ("0" * 32)
    directory.mkdir(parents=True)
    empty = directory / ".ro-1.0123456789abcdef.tmp"
    empty.touch()

    assert remove_leftovers(root, lambda _: []) == LeftoversRemoved()
    aged(empty, STALE_AFTER * 2)
    assert remove_leftovers(root, lambda _: []) == LeftoversRemoved(temporary=1)
