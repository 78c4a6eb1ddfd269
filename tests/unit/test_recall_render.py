"""The rendered entry: id, date, confidence and trust label, then the content as data."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn.changes import Create, NewRecord
from cairn.models import RecordVersion, Scope, Source, SourceKind, Trust
from cairn.recall.budget import block_entry
from cairn.recall.render import (
    CAVEAT,
    EMPTY_LINE,
    HEADING,
    BlockEntry,
    entry_line,
    quote,
    render_block,
)
from cairn.versioning import plan_writes
from cairn.visible_text import is_invisible

SCOPE = Scope(memory_id="m1", actor_id="a1")
RID = "mem-" + "0" * 36
SEEN = datetime(2026, 2, 3, 23, 30, tzinfo=UTC)


def version(content: str, *, kind: SourceKind, valid_from: datetime | None = None) -> RecordVersion:
    record = NewRecord(
        record_id=RID,
        namespace="/facts/a1/",
        content=content,
        confidence=0.876,
        sources=(Source(kind=kind),),
        valid_from=valid_from,
    )
    return plan_writes(SCOPE, [Create(record=record)], {}, SEEN)[0].version


def test_a_trusted_entry_shows_id_date_confidence_label_and_plain_content() -> None:
    line = entry_line(block_entry(version("Prefers green tea", kind=SourceKind.USER), 480))
    assert line == f"- {RID} | 2026-02-03 | confidence 0.88 | trusted | Prefers green tea"


def test_an_untrusted_entry_shows_its_content_as_a_quoted_string() -> None:
    line = entry_line(block_entry(version('Said "hi"\nthen left', kind=SourceKind.TOOL), 480))
    assert line == (
        f'- {RID} | 2026-02-03 | confidence 0.88 | untrusted | "Said \\"hi\\"\\nthen left"'
    )


def test_the_date_is_when_the_fact_began_to_hold_if_known() -> None:
    began = datetime(2023, 5, 7, tzinfo=UTC)
    entry = block_entry(
        version("Went to a support group", kind=SourceKind.USER, valid_from=began), 480
    )
    assert entry.date == "2023-05-07"


def test_line_separators_json_leaves_raw_are_escaped_too() -> None:
    assert quote("a\u2028b\u2029c\x85d") == '"a\\u2028b\\u2029c\\u0085d"'


def test_the_empty_block_keeps_the_frame_and_says_nothing_was_recalled() -> None:
    assert render_block(()) == f"{HEADING}\n{CAVEAT}\n{EMPTY_LINE}"


HIDDEN = {
    "tag characters": "\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065",
    "bidi override": "\u202e",
    "bidi isolate": "\u2066x\u2069",
    "zero width": "\u200b\u200c\u200d\u2060\ufeff",
}


@pytest.mark.parametrize("kind", [SourceKind.USER, SourceKind.TOOL])
@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_invisible_characters_are_shown_as_markers_in_trusted_and_untrusted_entries(
    kind: SourceKind, name: str
) -> None:
    content = f"Prefers tea{HIDDEN[name]} always"
    stored = version(content, kind=kind)

    line = entry_line(block_entry(stored, 480))

    assert stored.content == content  # the store keeps the text exactly
    assert not any(is_invisible(ch) for ch in line), repr(line)
    for hidden in HIDDEN[name]:
        if is_invisible(hidden):
            assert f"<U+{ord(hidden):04X}>" in line


def test_an_entry_built_outside_the_budget_is_neutralised_when_rendered() -> None:
    for trust in (Trust.TRUSTED, Trust.UNTRUSTED):
        entry = BlockEntry(
            record_id=RID, date="2026-02-03", confidence=0.5, trust=trust, text="a\u202eb\x1b[2Jc"
        )
        line = entry_line(entry)
        assert "\u202e" not in line
        assert "\x1b" not in line
        assert "<U+202E>" in line
