"""A record's context line (``RecordFields.context``, optional): what the record bears on among
the records linked to it, refreshed by evolution (``cairn.history.evolution``), never its
statement. Versioned like every field, kept across reopen, destroyed by erasure."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from cairn.changes import Create, NewRecord, RecordPatch, Revise
from cairn.clock import FixedClock
from cairn.models import MAX_CONTEXT_CHARS
from cairn.ports import Stores
from tests.conformance.backends import open_backend
from tests.conformance.erasure_scan import stored_bytes
from tests.conformance.samples import FACTS, MODEL, SCOPE, create

CONTEXT = "Linked to records about the apiary-quokka"
LATER = "Linked to records about the apiary-quokka and its honey"


def test_a_record_has_no_context_until_one_is_given(stores: Stores) -> None:
    assert create(stores, "I keep bees").context is None


def test_a_context_is_versioned_and_the_statement_stays(stores: Stores) -> None:
    record = NewRecord(namespace=FACTS, content="the hive", sources=(MODEL,), context=CONTEXT)
    (first,) = stores.records.apply(SCOPE, [Create(record=record)])

    (second,) = stores.records.apply(
        SCOPE, [Revise(record_id=first.record_id, patch=RecordPatch(context=LATER))]
    )

    assert (first.context, second.context) == (CONTEXT, LATER)
    assert second.content == first.content
    assert second.content_digest == first.content_digest
    assert [v.context for v in stores.records.history(SCOPE, first.record_id)] == [CONTEXT, LATER]
    assert stores.records.get(SCOPE, first.record_id) == second


@pytest.mark.parametrize("context", ["", "x" * (MAX_CONTEXT_CHARS + 1)])
def test_a_context_empty_or_too_long_is_refused(context: str) -> None:
    with pytest.raises(ValidationError, match="context"):
        RecordPatch(context=context)
    with pytest.raises(ValidationError, match="context"):
        NewRecord(namespace=FACTS, content="the hive", sources=(MODEL,), context=context)


def test_a_context_survives_reopen(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        record = NewRecord(namespace=FACTS, content="the hive", sources=(MODEL,), context=CONTEXT)
        (written,) = first.records.apply(SCOPE, [Create(record=record)])
    finally:
        first.close()
    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert again.records.get(SCOPE, written.record_id).context == CONTEXT
    finally:
        again.close()


def test_erasure_destroys_every_version_s_context(
    backend_name: str, stores: Stores, tmp_path: Path
) -> None:
    record = NewRecord(namespace=FACTS, content="the hive", sources=(MODEL,), context=CONTEXT)
    (first,) = stores.records.apply(SCOPE, [Create(record=record)])
    stores.records.apply(
        SCOPE, [Revise(record_id=first.record_id, patch=RecordPatch(context=LATER))]
    )

    stores.records.erase(SCOPE, first.record_id)

    assert [v.context for v in stores.records.history(SCOPE, first.record_id)] == [None, None]
    if backend_name != "memory":  # the in-memory backend keeps no bytes to scan
        assert b"apiary-quokka" not in stored_bytes(backend_name, tmp_path)
