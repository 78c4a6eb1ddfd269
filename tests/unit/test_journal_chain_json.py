"""A journal entry is serialised once when a store files it (``link_json``): the stored JSON is
byte for byte the linked entry's ``model_dump_json()``, and the chain digest is the one every
filed entry already carries (a stored format: existing journals must verify and replay)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.journal_chain import chain_digest, link, link_json
from cairn.models import RECORD_ID_PATTERN, EmbedderId, JournalEntry, SelectedEntry, ShownHit
from cairn.ports import ChainHead


def digest_as_first_filed(entry: JournalEntry) -> str:
    """The chain digest as it was defined when chains were first filed."""
    document = entry.model_dump(mode="json")
    for name in ("channels", "shown"):
        if not document[name]:
            del document[name]
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# Every float a score or a knob can hold: subnormal, tiny (where JSON writers differ most),
# huge, signed zero, infinite, not a number.
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.sampled_from([0.0, -0.0, 1e-5, 7.36e-05, 1e-4, 1e16, 1e21, 2.0**53, 5e-324]),
)
TEXT = st.text(max_size=40)  # any code point but a lone surrogate, control characters included
DIGEST = st.text("0123456789abcdef", min_size=64, max_size=64)
SELECTED = st.builds(
    SelectedEntry,
    record_id=st.from_regex(RECORD_ID_PATTERN, fullmatch=True),
    version=st.integers(min_value=1, max_value=2**40),
    content_digest=TEXT,
    score=FLOATS,
)
SHOWN = st.builds(
    ShownHit,
    kind=st.sampled_from(["records", "turns", "chunks"]),
    ref=st.text(min_size=1, max_size=20),
    version=st.none() | st.integers(min_value=1, max_value=99),
    digest=DIGEST,
    in_period=st.booleans(),
    score=FLOATS,
)
KNOB = st.one_of(st.none(), st.integers(-(2**70), 2**70), FLOATS, TEXT)
ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)


@st.composite
def entries(draw: st.DrawFn) -> JournalEntry:
    return JournalEntry(
        journal_id="jrn-" + draw(st.text("0123456789abcdef", min_size=1, max_size=32)),
        memory_id="m1",
        actor_id="a1",
        created_at=draw(st.datetimes(timezones=ZONES)),
        query=draw(TEXT),
        filters=draw(st.dictionaries(TEXT, TEXT, max_size=3)),
        embedder=draw(st.none() | st.just(EmbedderId(model_id="m", dims=384))),
        policy=draw(st.dictionaries(TEXT, KNOB, max_size=8)),
        selected=tuple(draw(st.lists(SELECTED, max_size=4))),
        block_digest=draw(DIGEST),
        weak=draw(st.booleans()),
        channels=tuple(draw(st.lists(st.sampled_from(["records", "turns"]), max_size=2))),
        shown=tuple(draw(st.lists(SHOWN, max_size=2))),
        sequence=draw(st.integers(min_value=0, max_value=9)),  # replaced by the link
    )


HEADS = st.none() | st.builds(ChainHead, sequence=st.integers(1, 2**40), digest=DIGEST)


@settings(max_examples=300, deadline=None)
@given(entry=entries(), head=HEADS)
def test_the_stored_json_is_the_linked_entry_dumped(
    entry: JournalEntry, head: ChainHead | None
) -> None:
    linked, new_head = link(entry, head)

    stored, stored_head = link_json(entry, head)

    assert stored == linked.model_dump_json()
    assert stored_head == new_head


@settings(max_examples=300, deadline=None)
@given(entry=entries())
def test_the_chain_digest_is_the_one_entries_were_filed_with(entry: JournalEntry) -> None:
    assert chain_digest(entry) == digest_as_first_filed(entry)
    _, head = link_json(entry, None)
    assert head.digest == digest_as_first_filed(link(entry, None)[0])


def test_a_dump_left_as_the_digest_needs_it_is_not_reused() -> None:
    """``link_json`` digests its own dump: the entry and later dumps of it are unchanged."""
    entry = JournalEntry(
        journal_id="jrn-1",
        memory_id="m1",
        actor_id="a1",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        query="tea",
        block_digest="0" * 64,
    )
    before: dict[str, Any] = entry.model_dump(mode="json")
    link_json(entry, None)
    assert entry.model_dump(mode="json") == before
