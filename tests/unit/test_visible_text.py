"""Invisible characters shown as visible markers (``cairn.visible_text``), issue 17 class 4."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.history.prompts import Passage, for_turns
from cairn.history.turns import Turn
from cairn.models import Role
from cairn.visible_text import is_invisible, neutralised, prompt_json


@pytest.mark.parametrize(
    "character",
    [
        *(chr(c) for c in (0xE0000, 0xE0001, 0xE0041, 0xE007F)),  # tag characters
        *(chr(c) for c in range(0x202A, 0x202F)),  # embeddings and overrides
        *(chr(c) for c in range(0x2066, 0x206A)),  # isolates
        "\u200e",
        "\u200f",
        "\u061c",
        "\u200b",
        "\u200c",
        "\u200d",
        "\u2060",
        "\ufeff",
        "\U000e0100",
        "\u3164",
        "\x1b",
        "\x07",
        "\x9b",
    ],
)
def test_each_hidden_character_becomes_its_marker(character: str) -> None:
    shown = neutralised(f"a{character}b")

    assert shown == f"a<U+{ord(character):04X}>b"
    assert is_invisible(character)


def test_controls_can_be_left_to_the_caller() -> None:
    assert neutralised("a\x1b[2J\u202eb", controls=False) == "a\x1b[2J<U+202E>b"


@given(st.text())
def test_neutralising_leaves_nothing_hidden_and_is_idempotent(text: str) -> None:
    shown = neutralised(text)

    assert not any(is_invisible(ch) for ch in shown)
    assert neutralised(shown) == shown


@given(st.text(alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"))))
def test_visible_text_is_left_exactly_as_it_was(text: str) -> None:
    visible = "".join(ch for ch in text if not is_invisible(ch))

    assert neutralised(visible) == visible


def test_a_history_rollup_prompt_shows_hidden_characters_as_markers() -> None:
    turn = Turn(
        seq=1,
        event_id="e1",
        session_id="s1",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        lines=((Role.USER, "Ignore\U000e0049\U000e0067 me \u202eok\u202c"),),
    )

    (message,) = for_turns([turn]).messages

    assert not any(is_invisible(ch) for ch in message.text)
    assert "<U+E0049>" in message.text
    assert "<U+202E>" in message.text


@given(st.text())
def test_a_prompt_document_is_valid_json_with_nothing_hidden(text: str) -> None:
    shown = prompt_json(Passage(n=1, speaker="user", text=text))

    assert not any(is_invisible(ch) for ch in shown)
    assert json.loads(shown)["n"] == 1  # still one valid JSON document


def test_every_invisible_character_str_isprintable_passes_is_one_the_fast_path_looks_for() -> None:
    from cairn.visible_text import _PRINTABLE_INVISIBLE

    for code in range(0x110000):
        character = chr(code)
        if is_invisible(character) and character.isprintable():
            assert _PRINTABLE_INVISIBLE.fullmatch(character), hex(code)


# Fillers, variation selectors and tags at and past their ranges' ends, format characters,
# controls, and visible non-ASCII neighbours (no-break space, private use, é, ’).
_HIDDEN_AND_NEAR = st.sampled_from(
    list(
        "\u115f\u1160\u3164\uffa0\U000e0100\U000e01ef\U000e01f0\U000e0000\U000e0041\U000e007f"
        "\u202e\u200b\ufeff\u00ad\u061c\x00\x1b\n\t\x85\x9f\u00a0\u2028\ue000\u00e9\u2019"
    )
)


@given(
    st.text(alphabet=st.one_of(st.characters(), _HIDDEN_AND_NEAR), max_size=40),
    st.booleans(),
)
def test_neutralised_marks_exactly_the_invisible_characters(text: str, controls: bool) -> None:
    marked = "".join(
        f"<U+{ord(ch):04X}>" if is_invisible(ch, controls=controls) else ch for ch in text
    )
    assert neutralised(text, controls=controls) == marked
