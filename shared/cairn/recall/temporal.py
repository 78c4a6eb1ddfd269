"""Time named in a query: the periods an English query refers to, resolved against ``now``.

Recognised (case-insensitive; anything else names no period, and recall is unchanged):

- a day: ``8 May 2023``, ``May 8, 2023``, ``8th of May, 2023``, ``2023-05-08``
- a month: ``May 2023``; ``in/during/last/since/early/late May`` (the latest May not after now)
- a season of a year: ``summer 2022`` (northern hemisphere, meteorological seasons)
- a year after a preposition: ``in 2022``, ``during 2022``; ``since/after 2022`` runs to now,
  ``before 2022`` from the beginning of time
- relative to now: ``today``, ``yesterday``, ``this/last week|weekend|month|year``,
  ``N days|weeks|months|years ago`` (``a``, ``one`` ... ``ten`` or digits)

Months stand alone only after a preposition, so "may" the verb is never read as a date. Periods
are half-open ``[start, end)`` in UTC. The parser is deliberately small: it knows no other
language and no holidays, and a period it cannot place is ignored rather than guessed.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS.update({abbr.lower(): n for n, abbr in enumerate(calendar.month_abbr) if abbr})
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NUMBERS.update({"seven": 7, "eight": 8, "nine": 9, "ten": 10})
_COUNT = "(" + "|".join([*_NUMBERS, r"\d{1,3}"]) + ")"
# Meteorological seasons: (first month, months long).
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Period:
    """A half-open span of time ``[start, end)`` that a query names."""

    start: datetime
    end: datetime

    def holds(self, when: datetime, *, lag: timedelta = timedelta(0)) -> bool:
        """Whether ``when`` falls in the period, or up to ``lag`` after its end."""
        return self.start <= when < self.end + lag


def _day(year: int, month: int, day: int) -> Period:
    # "31 February" raises ValueError: query_periods names no period rather than guess one.
    start = datetime(year, month, day, tzinfo=UTC)
    return Period(start, start + timedelta(days=1))


def _on(when: datetime) -> Period:
    start = datetime(when.year, when.month, when.day, tzinfo=UTC)
    return Period(start, start + timedelta(days=1))


def _months(year: int, month: int, count: int = 1) -> Period:
    first = datetime(year, month, 1, tzinfo=UTC)
    index = year * 12 + month - 1 + count
    return Period(first, datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC))


def _year(year: int) -> Period:
    return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _latest_month(month: int, now: datetime) -> Period:
    year = now.year if month <= now.month else now.year - 1
    return _months(year, month)


def _week_of(day: date) -> Period:
    monday = datetime.combine(day - timedelta(days=day.weekday()), datetime.min.time(), UTC)
    return Period(monday, monday + timedelta(days=7))


def _ago(count: int, unit: str, now: datetime) -> Period:
    """About ``count`` units before now: one unit either side, so "3 weeks ago" is 2-4 weeks."""
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    centre = now - timedelta(days=days * count)
    return Period(centre - timedelta(days=days), centre + timedelta(days=days))


def _relative(word: str, unit: str, now: datetime) -> Period:
    today = now.date()
    if unit in ("week", "weekend"):
        week = _week_of(today - timedelta(days=7) if word == "last" else today)
        if unit == "weekend":
            return Period(week.start + timedelta(days=5), week.end)
        return week
    if unit == "month":
        back = 1 if word == "last" else 0
        index = today.year * 12 + today.month - 1 - back
        return _months(index // 12, index % 12 + 1)
    return _year(today.year - (1 if word == "last" else 0))


def _year_after(preposition: str, year: int, now: datetime) -> Period:
    if preposition in ("since", "after"):
        # Half-open: the end lies a day past now, so whatever was said today still counts.
        return Period(_year(year).start, max(now + timedelta(days=1), _year(year).end))
    if preposition == "before":
        return Period(_EPOCH, _year(year).start)
    return _year(year)


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], datetime], Period]]
_RULES: tuple[_Rule, ...] = (
    (
        re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
        lambda m, _: _day(int(m[3]), _MONTHS[m[2]], int(m[1])),
    ),
    (
        re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
        lambda m, _: _day(int(m[3]), _MONTHS[m[1]], int(m[2])),
    ),
    (
        re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        lambda m, _: _day(int(m[1]), int(m[2]), int(m[3])),
    ),
    (
        re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b"),
        lambda m, _: _months(int(m[2]), _MONTHS[m[1]]),
    ),
    (
        re.compile(rf"\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_YEAR}\b"),
        lambda m, _: _months(int(m[2]), *_SEASONS[m[1]]),
    ),
    (
        re.compile(r"\b(in|during|of|since|after|before)\s+(?:the\s+year\s+)?(\d{4})\b"),
        lambda m, now: _year_after(m[1], int(m[2]), now),
    ),
    (
        re.compile(rf"\b(?:in|during|last|since|this|early|late|mid)\s+(?:in\s+)?{_MONTH}\b"),
        lambda m, now: _latest_month(_MONTHS[m[1]], now),
    ),
    (
        re.compile(r"\b(today|tonight|this morning)\b"),
        lambda _, now: _on(now),
    ),
    (
        re.compile(r"\byesterday\b"),
        lambda _, now: _on(now - timedelta(days=1)),
    ),
    (
        re.compile(r"\b(this|last|past)\s+(weekend|week|month|year)\b"),
        lambda m, now: _relative("this" if m[1] == "this" else "last", m[2], now),
    ),
    (
        re.compile(rf"\b{_COUNT}\s+(day|week|month|year)s?\s+ago\b"),
        lambda m, now: _ago(_NUMBERS.get(m[1]) or int(m[1]), m[2], now),
    ),
)


def _matches(text: str) -> Iterator[tuple[re.Match[str], Callable[..., Period]]]:
    """Every rule match, earlier rules first; a span already read by an earlier rule is skipped."""
    taken: list[tuple[int, int]] = []
    for pattern, build in _RULES:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            taken.append(match.span())
            yield match, build


@functools.lru_cache(maxsize=256)
def query_periods(text: str, now: datetime) -> tuple[Period, ...]:
    """The periods ``text`` names, in the order the rules find them; empty if it names none.
    Remembered for the last few (text, now) pairs: a recall asks several times."""
    lowered = text.casefold()
    found: list[Period] = []
    for match, build in _matches(lowered):
        try:
            period = build(match, now)
        except (ValueError, OverflowError):  # year 0, year 10000, "9 years ago" in year 3
            continue
        if period.start < period.end and period not in found:
            found.append(period)
    return tuple(found)
