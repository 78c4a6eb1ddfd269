"""How the ``cairn`` command reads times and reports invalid values (in process, no store)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from cairn.changes import NewRecord
from cairn.cli.args import parse_instant
from cairn.cli.errors import describe_validation_error, explain
from cairn.models import Source, SourceKind


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("2026-03-01", datetime(2026, 3, 1, 23, 59, 59, 999_999, tzinfo=UTC)),
        ("2026-03-01T09:30:00", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
        ("2026-03-01T09:30:00Z", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
        ("2026-03-01T09:30:00+02:00", datetime(2026, 3, 1, 7, 30, tzinfo=UTC)),
        ("2026-03-01T09:30:00.123456+00:00", datetime(2026, 3, 1, 9, 30, 0, 123_456, tzinfo=UTC)),
    ],
)
def test_a_date_alone_means_the_end_of_that_day_and_naive_times_are_utc(
    written: str, meant: datetime
) -> None:
    parsed = parse_instant(written)
    assert parsed == meant
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("written", ["yesterday", "2026-13-01", "01/03/2026", ""])
def test_a_time_that_is_not_iso_8601_is_refused_with_an_example(written: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="2026-03-01T09:30:00Z"):
        parse_instant(written)


def test_an_invalid_value_is_named_by_its_flag_and_never_echoed() -> None:
    secret = "my bank PIN is 4321 " * 1000
    with pytest.raises(ValidationError) as caught:
        NewRecord(
            namespace="no spaces allowed",
            content=secret,
            sources=(Source(kind=SourceKind.USER),),
        )
    line = describe_validation_error(caught.value)
    assert "\n" not in line
    assert "--namespace has characters that are not allowed" in line
    assert "TEXT: String should have at most 16000 characters" in line
    assert "4321" not in line
    assert "no spaces allowed" not in line


def test_an_unexpected_error_is_named_by_its_type_and_never_by_its_message() -> None:
    line, status = explain(RuntimeError("the user's diagnosis is X"))
    assert status == 1
    assert "RuntimeError" in line
    assert "CAIRN_DEBUG=1" in line
    assert "diagnosis" not in line
