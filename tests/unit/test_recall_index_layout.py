"""What the recall index works out once per snapshot: each row's hour, and the views asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from cairn.changes import Create, NewRecord
from cairn.models import Scope, Source, SourceKind
from cairn.recall.index import read_rows
from cairn.recall.index.layout import hours, view_of
from cairn.recall.index.snapshot import Snapshot, build_snapshot
from cairn.testing import FixedClock, InMemoryBackend

SCOPE = Scope(memory_id="mem-layout", actor_id="user-1")
STARTED = datetime(2025, 8, 20, 9, 59, 30, tzinfo=UTC)
NAMESPACES = (f"/facts/{SCOPE.actor_id}/", f"/preferences/{SCOPE.actor_id}/")


def _snapshot(count: int) -> Snapshot:
    backend = InMemoryBackend(FixedClock(STARTED))
    stores = backend.stores()
    for i in range(count):
        record = NewRecord(
            namespace=NAMESPACES[i % 2],
            strategy=("semantic", "custom")[i % 3 == 0],
            content=f"fact number {i}",
            sources=(Source(kind=SourceKind.USER),),
            seen_at=STARTED + timedelta(seconds=17 * i),  # across an hour's end
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    return build_snapshot(read_rows(stores.records, SCOPE, None), None)


def test_every_row_is_seen_before_the_end_of_its_hour_and_after_its_start() -> None:
    snapshot = _snapshot(12)
    found = hours(snapshot)
    ends = found.ends[found.hour]
    assert np.all(snapshot.last_seen < ends)
    assert np.all(snapshot.last_seen >= ends - 3600.0)
    assert len(found.ends) == 2  # 09:59:30 to 10:02:37
    assert hours(snapshot) is found


@pytest.mark.parametrize(
    ("prefix", "strategy"), [(NAMESPACES[0], None), (None, "semantic"), ("/", "custom")]
)
def test_a_view_is_the_snapshots_own_worked_out_once_and_read_only(
    prefix: str | None, strategy: str | None
) -> None:
    snapshot = _snapshot(9)
    view = view_of(snapshot, prefix, strategy)
    assert np.array_equal(view, snapshot.view(prefix, strategy))
    assert view_of(snapshot, prefix, strategy) is view
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 0
    other = _snapshot(9)  # a snapshot of another generation has views of its own
    assert view_of(other, prefix, strategy) is not view


def test_only_the_last_few_views_of_a_snapshot_are_kept() -> None:
    snapshot = _snapshot(4)
    first = view_of(snapshot, NAMESPACES[0], None)
    for i in range(8):
        view_of(snapshot, f"/other-{i}/", None)
    assert view_of(snapshot, NAMESPACES[0], None) is not first
