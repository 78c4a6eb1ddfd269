"""Rewriting a stored version or journal entry behind the store's back, as an attacker with
write access to the database (or a corrupting disk) would: the SQLite file, the moto table, the
in-memory fake."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.models import JournalEntry, Scope, content_digest
from cairn.ports import Stores
from cairn.store.memory import InMemoryBackend


def rewrite_version(
    backend_name: str,
    stores: Stores,
    path: Path,
    scope: Scope,
    record_id: str,
    version: int,
    content: str,
    *,
    fix_digest: bool,
) -> None:
    """Replace the stored content of one version; with ``fix_digest`` its digest too (a
    forgery that passes the row's own check), else the row keeps its stale digest."""
    if backend_name == "memory":
        if not fix_digest:
            pytest.skip("the in-memory backend keeps validated objects, never rows")
        owner = stores.owner
        assert isinstance(owner, InMemoryBackend)
        chain = owner.versions[scope][record_id]
        old = chain[version - 1]
        chain[version - 1] = old.model_copy(
            update={"content": content, "content_digest": content_digest(content)}
        )
        return
    if backend_name == "sqlite":
        _rewrite_sqlite(path / "cairn.db", scope, record_id, version, content, fix_digest)
        return
    if backend_name == "dynamodb":
        _rewrite_dynamodb(path, record_id, version, content, fix_digest)
        return
    raise AssertionError(f"no way to tamper with backend {backend_name!r}")


def _forged(data: str, content: str, fix_digest: bool) -> str:
    row = json.loads(data)
    row["content"] = content
    if fix_digest:
        row["content_digest"] = content_digest(content)
    return json.dumps(row)


def _rewrite_sqlite(
    db: Path, scope: Scope, record_id: str, version: int, content: str, fix_digest: bool
) -> None:
    where = (scope.memory_id, scope.actor_id, record_id, version)
    with sqlite3.connect(db) as conn:
        (data,) = conn.execute(
            "SELECT data FROM record_versions WHERE memory_id = ? AND actor_id = ?"
            " AND record_id = ? AND version = ?",
            where,
        ).fetchone()
        conn.execute(
            "UPDATE record_versions SET data = ? WHERE memory_id = ? AND actor_id = ?"
            " AND record_id = ? AND version = ?",
            (_forged(data, content, fix_digest), *where),
        )
    conn.close()


def _rewrite_dynamodb(
    path: Path, record_id: str, version: int, content: str, fix_digest: bool
) -> None:
    import boto3

    from tests.conformance.backends import _moto_client

    client = _moto_client(boto3, "dynamodb")
    table = json.loads((path / "dynamodb-tables.json").read_text())["items"]
    items = client.scan(TableName=table)["Items"]
    touched = 0
    for item in items:
        if "d" not in item or not item["sk"]["S"].startswith(("H#", "V#")):
            continue
        row = json.loads(item["d"]["S"])
        if row.get("record_id") == record_id and row.get("version") == version:
            item["d"] = {"S": _forged(item["d"]["S"], content, fix_digest)}
            client.put_item(TableName=table, Item=item)
            touched += 1
    assert touched, "the version to tamper with was not found"


Edit = Callable[[dict[str, Any]], dict[str, Any]]


def rewrite_journal(
    backend_name: str,
    stores: Stores,
    path: Path,
    scope: Scope,
    journal_id: str,
    edit: Edit | None,
) -> None:
    """Rewrite one stored journal entry's JSON with ``edit`` behind the store's back (the
    row's own sequence column follows the JSON, as a careful forger would make it), or delete
    the entry when ``edit`` is None."""
    if backend_name == "memory":
        owner = stores.owner
        assert isinstance(owner, InMemoryBackend)
        filed = owner.journal[scope]
        if edit is None:
            del filed[journal_id]
        else:
            document = edit(filed[journal_id].model_dump(mode="json"))
            filed[journal_id] = JournalEntry.model_validate(document)
        return
    if backend_name == "sqlite":
        _rewrite_sqlite_journal(path / "cairn.db", scope, journal_id, edit)
        return
    if backend_name == "dynamodb":
        _rewrite_dynamodb_journal(path, journal_id, edit)
        return
    raise AssertionError(f"no way to tamper with backend {backend_name!r}")


def _rewrite_sqlite_journal(db: Path, scope: Scope, journal_id: str, edit: Edit | None) -> None:
    where = (scope.memory_id, scope.actor_id, journal_id)
    with sqlite3.connect(db) as conn:
        if edit is None:
            conn.execute(
                "DELETE FROM journal WHERE memory_id = ? AND actor_id = ? AND journal_id = ?", where
            )
        else:
            (data,) = conn.execute(
                "SELECT data FROM journal WHERE memory_id = ? AND actor_id = ? AND journal_id = ?",
                where,
            ).fetchone()
            document = edit(json.loads(data))
            conn.execute(
                "UPDATE journal SET data = ?, sequence = ? WHERE memory_id = ? AND actor_id = ?"
                " AND journal_id = ?",
                (json.dumps(document), document["sequence"], *where),
            )
    conn.close()


def _rewrite_dynamodb_journal(path: Path, journal_id: str, edit: Edit | None) -> None:
    import boto3

    from tests.conformance.backends import _moto_client

    client = _moto_client(boto3, "dynamodb")
    table = json.loads((path / "dynamodb-tables.json").read_text())["items"]
    touched = 0
    for item in client.scan(TableName=table)["Items"]:
        if item["sk"]["S"] != f"J#{journal_id}":
            continue
        if edit is None:
            client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})
        else:
            item["d"] = {"S": json.dumps(edit(json.loads(item["d"]["S"])))}
            client.put_item(TableName=table, Item=item)
        touched += 1
    assert touched == 1, "the journal entry to tamper with was not found"
