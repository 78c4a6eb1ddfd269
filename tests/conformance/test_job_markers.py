"""What a background job notes per scope between runs (``JobLog.marker``): the rollup's history
generation, the link job's change cursor, evolution's digest of a record's neighbourhood. Kept
per scope, job and key, replaced by the next note, durable, and forgotten with the actor."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.errors import InvalidInputError
from cairn.jobs import MAX_MARKER_CHARS, JobName
from cairn.models import Scope
from cairn.ports import JobLog, Stores
from tests.conformance.backends import open_backend
from tests.conformance.samples import SCOPE

OTHER = Scope(memory_id=SCOPE.memory_id, actor_id="someone-else")
RECORD = "mem-00000000-0000-0000-0000-000000000001"


def log_of(stores: Stores) -> JobLog:
    assert stores.jobs is not None, "every backend keeps the job log"
    return stores.jobs


def test_a_marker_is_kept_per_scope_job_and_key_and_replaced(stores: Stores) -> None:
    log = log_of(stores)
    assert log.marker(SCOPE, JobName.ROLLUP) is None

    log.set_marker(SCOPE, JobName.ROLLUP, "7")
    log.set_marker(SCOPE, JobName.LINK, "12")
    log.set_marker(SCOPE, JobName.EVOLUTION, "digest-a", key=RECORD)
    log.set_marker(OTHER, JobName.ROLLUP, "3")
    log.set_marker(SCOPE, JobName.ROLLUP, "8")

    assert log.marker(SCOPE, JobName.ROLLUP) == "8"
    assert log.marker(SCOPE, JobName.LINK) == "12"
    assert log.marker(SCOPE, JobName.EVOLUTION, key=RECORD) == "digest-a"
    assert log.marker(SCOPE, JobName.EVOLUTION) is None
    assert log.marker(OTHER, JobName.ROLLUP) == "3"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("", "", "1 to 256 characters"),
        ("", "x" * (MAX_MARKER_CHARS + 1), "never content"),
        ("k" * 129, "1", "key it by an id"),
    ],
)
def test_a_marker_out_of_bounds_is_refused_and_nothing_noted(
    stores: Stores, key: str, value: str, said: str
) -> None:
    log = log_of(stores)
    log.set_marker(SCOPE, JobName.LINK, "4", key=key[:128])

    with pytest.raises(InvalidInputError, match=said):
        log.set_marker(SCOPE, JobName.LINK, value, key=key)

    assert log.marker(SCOPE, JobName.LINK, key=key[:128]) == "4"


def test_erasing_the_actor_forgets_its_markers_and_no_other(stores: Stores) -> None:
    log = log_of(stores)
    log.set_marker(SCOPE, JobName.ROLLUP, "7")
    log.set_marker(SCOPE, JobName.EVOLUTION, "digest-a", key=RECORD)
    log.set_marker(OTHER, JobName.ROLLUP, "3")

    erased = erase_actor(stores, SCOPE, staging=None)

    assert erased.job_markers == 2
    assert log.marker(SCOPE, JobName.ROLLUP) is None
    assert log.marker(SCOPE, JobName.EVOLUTION, key=RECORD) is None
    assert log.marker(OTHER, JobName.ROLLUP) == "3"
    assert log.erase_markers(SCOPE) == 0


def test_markers_survive_reopen(persistent_backend: str, clock: FixedClock, tmp_path: Path) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        log_of(first).set_marker(SCOPE, JobName.LINK, "42")
    finally:
        first.close()
    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert log_of(again).marker(SCOPE, JobName.LINK) == "42"
    finally:
        again.close()
