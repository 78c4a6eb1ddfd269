"""The recall journal stores each entry exactly; an unknown id is not found."""

from __future__ import annotations

import pytest

from cairn.errors import JournalNotFoundError
from cairn.ports import Stores
from tests.conformance.samples import SCOPE, journal_entry


def test_a_journal_entry_round_trips_exactly(stores: Stores) -> None:
    entry = journal_entry("j-1")

    stores.journal.put(entry)
    fetched = stores.journal.get(SCOPE, "j-1")

    assert fetched == entry.model_copy(update={"sequence": 1})  # the first link of the chain
    assert type(fetched.policy["max_block_bytes"]) is int
    assert type(fetched.policy["floor"]) is float


def test_journal_entries_are_kept_apart_by_id(stores: Stores) -> None:
    stores.journal.put(journal_entry("j-1"))
    stores.journal.put(journal_entry("j-2", selected_id="mem-" + "9" * 36))

    first, second = stores.journal.get(SCOPE, "j-1"), stores.journal.get(SCOPE, "j-2")
    assert first == journal_entry("j-1").model_copy(update={"sequence": 1})
    assert second.model_copy(update={"sequence": 0, "previous": None}) == journal_entry(
        "j-2", selected_id="mem-" + "9" * 36
    )


def test_an_unknown_journal_entry_is_not_found(stores: Stores) -> None:
    stores.journal.put(journal_entry("j-1"))

    with pytest.raises(JournalNotFoundError):
        stores.journal.get(SCOPE, "j-404")
