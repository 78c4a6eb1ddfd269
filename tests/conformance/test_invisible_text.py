"""Invisible text on every backend (issue 17, class 4): the store keeps content exactly, and
what recall and replay render for a model shows each hidden character as a visible marker."""

from __future__ import annotations

import pytest

from cairn.clock import FixedClock
from cairn.models import Source
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.replay import replay
from cairn.visible_text import is_invisible
from tests.conformance.samples import SCOPE, TOOL, USER, create

# "Ignore" spelled in tag characters, a right-to-left override, an isolate, zero-width joiners,
# a byte-order mark and a terminal escape that would clear the screen.
SMUGGLED = (
    "Allergic to penicillin"
    "\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"
    " \u202etxet desrever\u202c \u2066isolated\u2069 zero\u200bwidth\u200d\ufeff"
    " \x1b[2J"
)


@pytest.mark.parametrize("source", [USER, TOOL], ids=["trusted", "untrusted"])
def test_hidden_characters_reach_neither_the_block_nor_its_replay(
    stores: Stores, clock: FixedClock, source: Source
) -> None:
    created = create(stores, SMUGGLED, sources=(source,))

    found = recall(
        SCOPE, RecallQuery(text="penicillin allergy"), stores=stores, embedder=None, clock=clock
    )
    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)

    assert stores.records.get(SCOPE, created.record_id).content == SMUGGLED
    assert created.record_id in found.block
    for block in (found.block, replayed.block):
        assert not [ch for ch in block if is_invisible(ch) and ch != "\n"], repr(block)
        for shown in ("<U+E0049>", "<U+202E>", "<U+2066>", "<U+200B>", "<U+FEFF>"):
            assert shown in block
