"""``cairn quarantine``: an operator marks a source compromised, lists and unmarks it; ``history``
and ``as-of`` show what it covers as untrusted (quarantined) while the store keeps every version
exactly as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord
from cairn.cli.main import main
from cairn.clock import SystemClock
from cairn.models import Scope, Source, SourceKind, Trust
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="alice")


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path, SystemClock()) as backend:
        source = Source(kind=SourceKind.USER, session_id="kiosk", event_id="ev-1")
        record = NewRecord(
            namespace="/facts/alice/", content="Ships to Rua Augusta 12", sources=(source,)
        )
        (written,) = backend.stores().records.apply(SCOPE, [Create(record=record)])
    return path, written.record_id


def cairn(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_quarantine_add_list_remove_and_what_history_and_as_of_show(
    store: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_MEMORY", raising=False)
    path, record_id = store
    where = ["--store", str(path)]
    seen = ["--store", str(path), "--actor", "alice"]
    added = cairn(
        capsys, "quarantine", "add", "session:kiosk", "--reason", "kiosk hijacked", *where
    )
    again = cairn(capsys, "quarantine", "add", "session:kiosk", *where)
    listed = cairn(capsys, "quarantine", "list", *where)
    history = cairn(capsys, "history", record_id, *seen)
    as_json = cairn(capsys, "history", record_id, "--json", *seen)
    as_of = cairn(capsys, "as-of", "2100-01-01T00:00:00Z", *seen)
    removed = cairn(capsys, "quarantine", "remove", "session:kiosk", *where)
    after = cairn(capsys, "history", record_id, *seen)

    assert added[:2] == (0, "session:kiosk: quarantined in memory default\n")
    assert "already quarantined" in again[1]
    assert "1 quarantined source(s) in memory default" in listed[1]
    assert "- session:kiosk  since " in listed[1]
    assert "kiosk hijacked" in listed[1]
    assert "untrusted (quarantined)" in history[1]
    (version,) = json.loads(as_json[1])["versions"]
    assert (version["trust"], version["quarantined"]) == ("untrusted", True)
    assert "[fact, untrusted (quarantined)]" in as_of[1]
    assert removed[1] == "session:kiosk: no longer quarantined in memory default\n"
    assert "untrusted" not in after[1]
    with SQLiteBackend(path, SystemClock()) as backend:
        assert backend.stores().records.get(SCOPE, record_id).trust is Trust.TRUSTED


def test_a_source_that_is_not_field_value_is_a_usage_error(
    store: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = store
    status, _, err = cairn(capsys, "quarantine", "add", "weather-plugin", "--store", str(path))
    assert status == 2
    assert "FIELD:VALUE" in err
    assert "kind, speaker, rollout" in err


def test_the_cli_names_every_field_a_selector_has() -> None:
    from cairn.cli.quarantine import SELECTOR_FIELDS
    from cairn.quarantine import SelectorField

    assert tuple(field.value for field in SelectorField) == SELECTOR_FIELDS


def test_quarantine_on_the_deployed_stack_names_the_table_by_its_outputs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    boto3 = pytest.importorskip("boto3")
    moto = pytest.importorskip("moto")
    from cairn.store.dynamodb import DynamoDBBackend
    from cairn.store.dynamodb.schema import TABLES, create_table_request

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("CAIRN_MEMORY", raising=False)
    with moto.mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            dynamodb.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        outputs = {"ItemsTableName": {"Value": "cairn-items"}}
        template = {"Resources": {"Unused": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs}
        boto3.client("cloudformation", region_name="us-east-1").create_stack(
            StackName="cairn", TemplateBody=json.dumps(template)
        )
        added = cairn(
            capsys, "quarantine", "add", "kind:tool", "--stack", "cairn", "--memory", "m1"
        )
        listed = cairn(
            capsys, "quarantine", "list", "--items-table", "cairn-items", "--memory", "m1"
        )
        backend = DynamoDBBackend(dynamodb, items_table="cairn-items", events_table="cairn-events")
        quarantine = backend.stores().quarantine
        assert quarantine is not None
        held = [str(e.selector) for e in quarantine.entries("m1")]

    assert added[:2] == (0, "kind:tool: quarantined in memory m1\n")
    assert "1 quarantined source(s) in memory m1" in listed[1]
    assert held == ["kind:tool"]
