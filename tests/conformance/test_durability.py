"""A persistent backend keeps everything across close and reopen (skipped for in-memory ones)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cairn.changes import Create, RecordPatch, Retract, Revise
from cairn.clock import FixedClock
from cairn.errors import InvalidChangeError
from cairn.ports import Stores
from tests.conformance.backends import open_backend
from tests.conformance.samples import (
    EMBEDDER,
    SCOPE,
    create,
    event_input,
    journal_entry,
    new_fact,
    vector,
)


def test_everything_written_survives_a_reopen(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first: Stores = open_backend(persistent_backend, clock, tmp_path)
    try:
        kept = create(first, "Keeps bees", embedding=vector(0.5, 0.5, 0.5, 0.5))
        clock.advance(hours=1)
        first.records.apply(
            SCOPE, [Revise(record_id=kept.record_id, patch=RecordPatch(importance=0.8))]
        )
        gone = create(first, "Kept chickens")
        first.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
        event = first.events.append(SCOPE, event_input())
        first.journal.put(journal_entry("j-1"))
        histories = {r: first.records.history(SCOPE, r) for r in (kept.record_id, gone.record_id)}
        listed = first.records.list_records(SCOPE, include_inactive=True)
    finally:
        first.close()

    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        for record_id, history in histories.items():
            assert again.records.history(SCOPE, record_id) == history
        assert again.records.list_records(SCOPE, include_inactive=True) == listed
        head = again.records.get(SCOPE, kept.record_id)
        found = again.records.vectors(SCOPE, [kept.ref, head.ref], EMBEDDER)
        assert set(found) == {kept.ref, head.ref}
        np.testing.assert_allclose(found[head.ref], (0.5, 0.5, 0.5, 0.5))
        assert again.events.get_event(SCOPE, "s1", event.event_id) == event
        assert [s.session_id for s in again.events.list_sessions(SCOPE).items] == ["s1"]
        assert again.journal.get(SCOPE, "j-1") == journal_entry("j-1").model_copy(
            update={"sequence": 1}  # filed as the first link of the scope's chain
        )
    finally:
        again.close()


def test_a_failed_apply_leaves_nothing_behind_after_reopen(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        kept = create(first, "Keeps bees")
        first.records.apply(SCOPE, [Retract(record_id=kept.record_id)])
        with pytest.raises(InvalidChangeError):
            first.records.apply(
                SCOPE,
                [
                    Create(record=new_fact("Keeps goats")),
                    Revise(record_id=kept.record_id, patch=RecordPatch(content="Keeps wasps")),
                ],
            )
    finally:
        first.close()

    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert len(again.records.history(SCOPE, kept.record_id)) == 2
        assert again.records.list_records(SCOPE, include_inactive=True).items == (
            again.records.get(SCOPE, kept.record_id),
        )
    finally:
        again.close()
