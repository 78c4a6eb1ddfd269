"""Tampered and corrupt rows on every backend (issue 17, class 8): replay refuses a forgery by
name instead of rendering it, and one corrupt row is reported and skipped, never fatal to the
scope's recall."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.errors import CorruptRecordError, ReplayMismatchError
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.replay import replay
from tests.conformance.samples import SCOPE, create, listed_ids
from tests.conformance.tamper import rewrite_version

FORGED = "No known drug allergies"


def _recall(stores: Stores, clock: FixedClock, text: str = "penicillin allergy tea") -> str:
    found = recall(SCOPE, RecallQuery(text=text), stores=stores, embedder=None, clock=clock)
    assert found.journal_id is not None
    return found.journal_id


def test_replay_refuses_content_rewritten_with_its_digest_and_names_the_record(
    stores: Stores, clock: FixedClock, backend_name: str, tmp_path: Path
) -> None:
    allergy = create(stores, "Allergic to penicillin")
    create(stores, "Drinks green tea")
    journal_id = _recall(stores, clock)
    assert replay(SCOPE, journal_id, stores=stores).matches

    rewrite_version(
        backend_name, stores, tmp_path, SCOPE, allergy.record_id, 1, FORGED, fix_digest=True
    )

    with pytest.raises(ReplayMismatchError, match=allergy.record_id) as refused:
        replay(SCOPE, journal_id, stores=stores)
    assert refused.value.record_ids == (allergy.record_id,)
    assert FORGED not in str(refused.value)


def test_a_stale_digest_row_is_skipped_and_reported_and_the_scope_still_recalls(
    stores: Stores,
    clock: FixedClock,
    backend_name: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    allergy = create(stores, "Allergic to penicillin")
    tea = create(stores, "Drinks green tea")
    journal_id = _recall(stores, clock)

    rewrite_version(
        backend_name, stores, tmp_path, SCOPE, allergy.record_id, 1, FORGED, fix_digest=False
    )

    with caplog.at_level(logging.WARNING, logger="cairn"):
        found = recall(
            SCOPE, RecallQuery(text="green tea"), stores=stores, embedder=None, clock=clock
        )
        listed = listed_ids(stores)
    assert [e.version.record_id for e in found.entries] == [tea.record_id]
    assert listed == [tea.record_id]
    assert allergy.record_id in caplog.text
    assert FORGED not in caplog.text
    with pytest.raises(CorruptRecordError, match=allergy.record_id):
        stores.records.get(SCOPE, allergy.record_id)
    with pytest.raises(CorruptRecordError, match=allergy.record_id):
        replay(SCOPE, journal_id, stores=stores)
