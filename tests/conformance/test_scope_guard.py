"""A store that returns another scope's rows (issue 17, class 6), on every backend: no path that
builds a model prompt (consolidation, formation, recall) lets a foreign row through, and each
violation is logged with its count, never its content."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.consolidate.commit import consolidate_scope
from cairn.models import Page, RecordVersion, Scope
from cairn.ports import RecordStore, Stores
from cairn.recall import RecallQuery, recall
from tests.unit.consolidation_support import SCOPE, Bench, answer

OTHER = Scope(memory_id=SCOPE.memory_id, actor_id="tg:8")
FOREIGN = "The vault code of tg:8 is 4711, tea drinkers"


class LeakyRecords:
    """A faulty backend: every listing of any scope also returns the other scope's records."""

    def __init__(self, inner: RecordStore) -> None:
        self._inner = inner

    def list_records(self, scope: Scope, **options: Any) -> Page[RecordVersion]:
        page = self._inner.list_records(scope, **options)
        if scope == OTHER:
            return page
        foreign = self._inner.list_records(OTHER).items
        return Page[RecordVersion](items=(*page.items, *foreign), next_cursor=page.next_cursor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def bench(stores: Stores, clock: FixedClock, tmp_path: Path) -> Bench:
    if stores.rollouts is None:
        pytest.skip("this backend keeps no rollouts, so it runs no consolidation")
    leaky = dataclasses.replace(stores, records=LeakyRecords(stores.records))
    made = Bench(tmp_path, stores=leaky, clock=clock)
    made.remember(FOREIGN, scope=OTHER)
    made.remember("The user prefers tea.")
    return made


def test_consolidation_never_shows_the_model_a_foreign_row(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    bench.run("I still drink tea every morning.")
    bench.model.queue(answer())

    with caplog.at_level(logging.WARNING, logger="cairn"):
        consolidate_scope(SCOPE, bench.consolidator())

    (request,) = bench.model.requests
    assert "4711" not in request.model_dump_json()
    assert "scope violation" in caplog.text
    assert "1 record(s)" in caplog.text
    assert "4711" not in caplog.text


def test_recall_never_shows_a_foreign_row_and_logs_the_violation(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="cairn"):
        found = recall(
            SCOPE,
            RecallQuery(text="tea drinkers vault code"),
            stores=bench.stores,
            embedder=None,
            clock=bench.clock,
        )

    assert "4711" not in found.block
    assert "The user prefers tea." in found.block
    assert "scope violation" in caplog.text
