"""Persona files from S3 (moto): read once per warm container, then only a conditional request
per file per interval; an edit shows up after the interval, a missing file is left out."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from cairn.aws.s3_objects import S3ObjectReader
from cairn.clock import FixedClock
from cairn.errors import ConfigurationError
from cairn.telegram.persona import PersonaFiles

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
BUCKET = "persona-bucket"


@pytest.fixture
def s3() -> Iterator[Any]:
    with moto.mock_aws():
        client = boto3.client(
            "s3",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
        )
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        client.put_object(
            Bucket=BUCKET, Key="bot/SOUL.md", Body=b"You are Pip, a cheerful barista."
        )
        client.put_object(Bucket=BUCKET, Key="bot/USER.md", Body=b"The user is a night owl.")
        yield client


def _count_gets(client: Any) -> list[str]:
    calls: list[str] = []
    client.meta.events.register(
        "before-call.s3.GetObject", lambda params, **_: calls.append(params["url_path"])
    )
    return calls


def test_files_are_read_once_then_only_checked_each_interval(s3: Any) -> None:
    clock = FixedClock()
    persona = PersonaFiles(
        S3ObjectReader(s3, bucket=BUCKET),
        clock=clock,
        prefix="bot/",
        check_every=timedelta(seconds=60),
    )
    gets = _count_gets(s3)
    first = persona.prompt()
    assert first == (
        "# SOUL.md\n\nYou are Pip, a cheerful barista.\n\n# USER.md\n\nThe user is a night owl."
    )
    for _ in range(5):
        clock.advance(seconds=10)
        assert persona.prompt() == first
    assert len(gets) == 2  # five more messages within the interval: no request at all
    assert persona.fetches == 2

    clock.advance(seconds=60)
    assert persona.prompt() == first
    assert len(gets) == 4  # one conditional GET per file ...
    assert persona.fetches == 2  # ... answered 304: nothing downloaded


def test_an_edit_reaches_the_prompt_after_the_interval(s3: Any) -> None:
    clock = FixedClock()
    persona = PersonaFiles(
        S3ObjectReader(s3, bucket=BUCKET),
        clock=clock,
        prefix="bot/",
        check_every=timedelta(seconds=60),
    )
    persona.prompt()
    s3.put_object(Bucket=BUCKET, Key="bot/USER.md", Body=b"The user is an early bird now.")
    assert "night owl" in persona.prompt()  # within the interval: the cached persona
    clock.advance(seconds=61)
    assert "early bird" in persona.prompt()
    assert persona.fetches == 3  # only the edited file was downloaded again


def test_a_missing_file_is_left_out(s3: Any) -> None:
    persona = PersonaFiles(
        S3ObjectReader(s3, bucket=BUCKET),
        clock=FixedClock(),
        files=("SOUL.md", "RULES.md"),
        prefix="bot/",
    )
    assert persona.prompt() == "# SOUL.md\n\nYou are Pip, a cheerful barista."


def test_a_bucket_that_refuses_the_read_is_a_configuration_error(s3: Any) -> None:
    persona = PersonaFiles(
        S3ObjectReader(s3, bucket="no-such-persona-bucket"), clock=FixedClock(), prefix="bot/"
    )
    with pytest.raises(ConfigurationError, match="s3:GetObject permission"):
        persona.prompt()
