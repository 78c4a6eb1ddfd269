"""Periods named in a query: explicit dates, months, seasons, years and relative phrases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.recall.temporal import Period, query_periods

NOW = datetime(2026, 6, 10, 15, 30, tzinfo=UTC)


def day(year: int, month: int, dom: int, days: int = 1) -> Period:
    start = datetime(year, month, dom, tzinfo=UTC)
    return Period(start, start + timedelta(days=days))


def span(start: tuple[int, int, int], end: tuple[int, int, int]) -> Period:
    return Period(datetime(*start, tzinfo=UTC), datetime(*end, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What movie did Joanna watch on 1 May, 2022?", day(2022, 5, 1)),
        ("What did Tim finish reading on 8th December, 2023?", day(2023, 12, 8)),
        ("Who did Maria have dinner with on May 3, 2023?", day(2023, 5, 3)),
        ("what happened on 2024-02-29", day(2024, 2, 29)),
        ("Where did Joanna travel to in July 2022?", span((2022, 7, 1), (2022, 8, 1))),
        ("What did she do in December 2023?", span((2023, 12, 1), (2024, 1, 1))),
        ("Which state did Joanna visit in summer 2021?", span((2021, 6, 1), (2021, 9, 1))),
        ("ski trip in winter 2022", span((2022, 12, 1), (2023, 3, 1))),
        ("What did John renovate in 2022?", span((2022, 1, 1), (2023, 1, 1))),
        ("What did I cook in May?", span((2026, 5, 1), (2026, 6, 1))),
        ("plans made last September", span((2025, 9, 1), (2025, 10, 1))),
        ("what did I say yesterday", day(2026, 6, 9)),
        ("anything from today?", day(2026, 6, 10)),
        ("what did we decide last week", span((2026, 6, 1), (2026, 6, 8))),
        ("where did I go last weekend", span((2026, 6, 6), (2026, 6, 8))),
        ("books I read last month", span((2026, 5, 1), (2026, 6, 1))),
        ("what changed this year", span((2026, 1, 1), (2027, 1, 1))),
        ("what did I buy three weeks ago", span((2026, 5, 13, 15, 30), (2026, 5, 27, 15, 30))),
    ],
)
def test_a_query_naming_a_time_yields_that_period(text: str, expected: Period) -> None:
    assert expected in query_periods(text, NOW)


def test_since_a_year_runs_to_now_and_before_a_year_runs_from_the_start() -> None:
    (since,) = query_periods("What has changed since 2024?", NOW)
    assert since.start == datetime(2024, 1, 1, tzinfo=UTC)
    assert since.holds(NOW)
    (before,) = query_periods("Where did I live before 2020?", NOW)
    assert before.end == datetime(2020, 1, 1, tzinfo=UTC)
    assert before.holds(datetime(1999, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    "text",
    [
        "You may like tea",
        "May I ask what the user prefers?",
        "What is the user's favourite colour?",
        "How many of the 2000 photos were kept?",
        "Nothing happened on 31 February 2023",
    ],
)
def test_a_query_naming_no_time_yields_no_period(text: str) -> None:
    assert query_periods(text, NOW) == ()


def test_a_full_date_is_read_once_not_also_as_its_month_and_year() -> None:
    assert query_periods("on 8 May, 2023", NOW) == (day(2023, 5, 8),)


def test_a_lag_extends_a_period_past_its_end() -> None:
    (may,) = query_periods("in May 2023", NOW)
    told_later = datetime(2023, 6, 5, tzinfo=UTC)
    assert not may.holds(told_later)
    assert may.holds(told_later, lag=timedelta(days=7))


@given(text=st.text(max_size=200), now=st.datetimes(timezones=st.just(UTC)))
def test_any_text_yields_only_non_empty_periods_and_never_raises(text: str, now: datetime) -> None:
    for period in query_periods(text, now):
        assert period.start < period.end
