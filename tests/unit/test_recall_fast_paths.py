"""The warm recall path's shortcuts give exactly what the plain expressions give."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from cairn.recall.cosines import row_cosines, unit, unit_rows
from cairn.recall.index.scoring import _at_least
from cairn.recall.index.understanding import confident
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import MARGIN_RANK
from cairn.recall.render import one_line


@given(
    st.floats(min_value=0.0, max_value=1.0),
    st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=50),
)
def test_a_float32_floor_passes_exactly_the_cosines_a_double_floor_passes(
    floor: float, cosines: list[float]
) -> None:
    values = np.array(cosines, dtype=np.float32)
    as_doubles = values.astype(np.float64) >= floor
    assert np.array_equal(values >= _at_least(floor), as_doubles)


def test_a_floor_between_two_float32_values_rounds_up_not_to_nearest() -> None:
    floor = 0.7  # float32(0.7) is below 0.7
    assert float(np.float32(floor)) < floor
    assert float(_at_least(floor)) >= floor
    assert not bool(np.float32(floor) >= _at_least(floor))


def _one_line_by_category(text: str) -> str:
    import re

    collapsed = re.sub(r"\s+", " ", text)
    return "".join(ch for ch in collapsed if unicodedata.category(ch) != "Cc").strip()


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_one_line_drops_exactly_the_control_characters(text: str) -> None:
    assert one_line(text) == _one_line_by_category(text)


# Every character ``\s`` matches or ``str.isspace`` holds, and some controls among them.
_BREAKS = st.sampled_from(
    list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000")
    + list("\x00\x07\x1b\x7f\x9f\u200b\ufeff")
)


@given(st.text(alphabet=st.one_of(st.characters(codec="utf-8"), _BREAKS), max_size=60))
def test_one_line_collapses_exactly_the_whitespace_runs_a_regex_collapses(text: str) -> None:
    import re

    collapsed = re.sub(r"\s+", " ", text)
    assert one_line(text) == re.sub("[\x00-\x1f\x7f-\x9f]", "", collapsed).strip()


def test_one_line_drops_c1_controls_and_keeps_their_neighbours() -> None:
    assert one_line("a\x85b\x9fc\x7fd\x00e") == "a bcde"


@given(st.integers(min_value=1, max_value=300), st.integers(min_value=0, max_value=2**32 - 1))
def test_a_rows_cosine_never_depends_on_the_other_rows_of_the_matrix(rows: int, seed: int) -> None:
    generator = np.random.default_rng(seed)
    matrix = unit_rows(generator.standard_normal((rows, 384)).astype(np.float32))
    query = unit(generator.standard_normal(384))
    chosen = generator.choice(rows, size=max(1, rows // 3), replace=False)

    whole = row_cosines(matrix, query)

    assert np.array_equal(row_cosines(matrix[chosen], query), whole[chosen])
    assert [float(whole[i]) for i in chosen] == [float(np.dot(matrix[i], query)) for i in chosen]


@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), max_size=50))
def test_clipping_a_float32_cosine_then_widening_it_gives_the_double_the_plain_clip_gives(
    cosines: list[float],
) -> None:
    values = np.array([*cosines, -0.0, 0.0, 1.0], dtype=np.float32)
    plain = np.minimum(1.0, np.maximum(0.0, values.astype(np.float64)))
    shortcut = np.clip(values, 0.0, 1.0).astype(np.float64)
    assert np.array_equal(shortcut.view(np.int64), plain.view(np.int64))


@given(
    st.lists(st.floats(min_value=-1.0, max_value=1.0, width=32), min_size=1, max_size=40),
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(min_value=0.0, max_value=1.0),
)
# The best stands the margin above the fifth best, not above the fourth; five pass the floor.
@example([0.4, 0.35, 0.3, 0.25, 0.2, 0.1], 0.15, 0.5, 0.18)
def test_the_confidence_bar_reads_the_same_from_the_cosines_that_pass_the_floor(
    cosines: list[float], floor: float, bar: float, margin: float
) -> None:
    policy = RecallPolicy(confident_cosine=bar, confident_margin=margin, confident_keyword=1.01)
    values = np.array(cosines, dtype=np.float32)
    ranked = sorted((float(v) for v in values), reverse=True)
    runner = ranked[min(MARGIN_RANK, len(ranked)) - 1]
    expected = ranked[0] >= bar or ranked[0] - runner >= margin
    assert confident(values, 0.0, 0.0, policy) == expected
    passed = values[values >= _at_least(floor)]
    if len(passed) >= MARGIN_RANK:  # the view's best MARGIN_RANK are among them
        assert confident(passed, 0.0, 0.0, policy) == expected
