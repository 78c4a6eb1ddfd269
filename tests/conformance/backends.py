"""The backends the conformance suite runs against, and what each can do.

Each factory opens a fresh backend over ``path`` (a directory it may use as it likes) and
returns its ``Stores``. Backend modules are imported inside the factory, so a backend that is
broken or missing fails its own tests with a clear message instead of the whole suite at
collection. A new backend joins by adding one entry here; the tests do not change.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.ports import Clock, Stores

Factory = Callable[[Clock, Path], Stores]


def open_memory(clock: Clock, path: Path) -> Stores:
    from cairn.store.memory import InMemoryBackend

    return InMemoryBackend(clock).stores()


def open_sqlite(clock: Clock, path: Path) -> Stores:
    from cairn.store.sqlite import SQLiteBackend

    return SQLiteBackend(path / "cairn.db", clock).stores()


def open_dynamodb(clock: Clock, path: Path) -> Stores:
    """DynamoDB on moto, tables created from ``cairn.store.dynamodb.schema``, recall index
    objects in a moto S3 bucket (``cairn.aws.s3_index_objects``), as the stack deploys them.

    The table and bucket names are kept in ``path``: opening the same path again (while no
    other test has reset moto) finds the same tables and what was written to them.
    """
    import boto3
    from moto import mock_aws

    from cairn.aws.s3_index_objects import S3IndexObjects
    from cairn.store.dynamodb import DynamoDBBackend
    from cairn.store.dynamodb.schema import TABLES, create_table_request

    names_file = path / "dynamodb-tables.json"
    bucket_file = path / "dynamodb-index-bucket.txt"  # the tables file names tables only
    reopened = names_file.exists()
    mock = mock_aws()
    mock.start(reset=not reopened)
    client = _moto_client(boto3, "dynamodb")
    s3 = _moto_client(boto3, "s3")
    if reopened:
        names = json.loads(names_file.read_text())
    else:
        suffix = uuid.uuid4().hex[:12]
        names = {table.logical_name: f"cairn-{table.logical_name}-{suffix}" for table in TABLES}
        for table in TABLES:
            client.create_table(**create_table_request(table, names[table.logical_name]))
        names_file.write_text(json.dumps(names))
        bucket_file.write_text(f"cairn-index-{suffix}")
        s3.create_bucket(Bucket=bucket_file.read_text())
    backend = DynamoDBBackend(
        client,
        items_table=names["items"],
        events_table=names["events"],
        clock=clock,
        index_objects=S3IndexObjects(s3, bucket=bucket_file.read_text()),
    )

    class StopMoto:
        def close(self) -> None:
            backend.close()
            mock.stop(remove_data=False)  # kept for a reopen; the next fresh open resets

    return dataclasses.replace(backend.stores(), owner=StopMoto())


@functools.cache
def _moto_client(boto3: Any, service: str) -> Any:
    """One client a service for every test: building one loads botocore's models (~0.3 s), and
    moto intercepts any client made after moto was imported, whenever a mock is active."""
    return boto3.session.Session().client(
        service,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106  # moto's fake credentials
    )


BACKENDS: dict[str, Factory] = {
    "memory": open_memory,
    "sqlite": open_sqlite,
    "dynamodb": open_dynamodb,
}

# Optional capability: opening the factory again on the same path sees what was written before.
PERSISTENT: frozenset[str] = frozenset({"sqlite", "dynamodb"})


def open_backend(name: str, clock: Clock, path: Path) -> Stores:
    """Open backend ``name``; a missing cairn module fails, a missing third-party extra skips."""
    try:
        return BACKENDS[name](clock, path)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "cairn":
            pytest.fail(f"backend {name!r} cannot be imported: {exc}")
        pytest.skip(f"backend {name!r} needs {exc.name!r}, which is not installed")
