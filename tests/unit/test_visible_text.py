"""Invisible characters shown as visible markers (``cairn.visible_text``), issue 17 class 4."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.visible_text import is_invisible, neutralised


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
