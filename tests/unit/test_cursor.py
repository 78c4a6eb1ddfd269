"""Cursors are opaque, and refused outside the scope and query that issued them."""

from __future__ import annotations

import pytest

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import InvalidCursorError


def test_a_cursor_round_trips_in_its_own_scope_and_query() -> None:
    token = encode_cursor("m1|a1", {"ns": "/facts/"}, "mem-0001")
    assert "mem-0001" not in token
    assert decode_cursor("m1|a1", {"ns": "/facts/"}, token) == "mem-0001"


@pytest.mark.parametrize(
    ("scope", "query"),
    [("m1|a2", {"ns": "/facts/"}), ("m2|a1", {"ns": "/facts/"}), ("m1|a1", {"ns": "/prefs/"})],
)
def test_a_cursor_is_refused_in_another_scope_or_query(scope: str, query: dict[str, str]) -> None:
    token = encode_cursor("m1|a1", {"ns": "/facts/"}, "mem-0001")
    with pytest.raises(InvalidCursorError):
        decode_cursor(scope, query, token)


@pytest.mark.parametrize("token", ["", "not base64!", "eyJ4IjoxfQ", "////"])
def test_a_malformed_cursor_is_refused_with_advice(token: str) -> None:
    with pytest.raises(InvalidCursorError, match="cursor"):
        decode_cursor("m1|a1", {}, token)
