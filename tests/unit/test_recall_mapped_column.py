"""A mapped snapshot's column read for a whole shortlist at once (``_Column.many``) gives each
row's value as reading it alone does, decodes a row once however it is read, and refuses rows
outside the column."""

from __future__ import annotations

import pytest

from cairn.recall.index.mapped import _Column


def _column(size: int) -> tuple[_Column, list[int]]:
    decoded: list[int] = []

    def read(row: int) -> str:
        decoded.append(row)
        return f"value {row}"

    return _Column(size, read), decoded


def test_many_rows_read_as_each_row_alone() -> None:
    column, decoded = _column(10)
    assert column[3] == "value 3"
    rows = [7, 3, 0, 9, 7]
    assert column.many(rows) == [f"value {row}" for row in rows]
    assert column.many([]) == []
    assert sorted(decoded) == [0, 3, 7, 9]  # each row decoded once, kept for either way in
    assert column[9] == "value 9"
    assert sorted(decoded) == [0, 3, 7, 9]


@pytest.mark.parametrize("rows", [[-1], [2, 10], [10]])
def test_rows_outside_the_column_are_refused(rows: list[int]) -> None:
    column, decoded = _column(10)
    with pytest.raises(IndexError, match="outside"):
        column.many(rows)
    assert decoded == []
