"""Every ``StagingStore`` backend stages rollout payloads the same way: write-once per id,
scoped, keyed without user text, and erasable by scope.

Runs over the embedded filesystem twin and over S3 on moto; it has its own ``staging`` fixture
because staging is not part of the records ``Stores`` bundle.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.errors import (
    ConflictError,
    InvalidInputError,
    NotFoundError,
    RolloutConflictError,
    RolloutNotFoundError,
)
from cairn.models import Scope
from cairn.ports import StagingStore
from cairn.rollout.staging_keys import MAX_PAYLOAD_BYTES, staging_key

SCOPE = Scope(memory_id="support-bot", actor_id="tg:12345")
OTHER_ACTOR = Scope(memory_id="support-bot", actor_id="tg:67890")
PAYLOAD = b'{"events": [{"role": "user", "text": "I moved to Lisbon"}]}'


def open_filesystem(tmp_path: Path) -> Iterator[StagingStore]:
    from cairn.local.fs_staging import FilesystemStagingStore

    yield FilesystemStagingStore(tmp_path / "staging")


@pytest.fixture(scope="module")
def aws_session() -> Any:
    """One boto3 session for the module: clients from a shared session load their models once."""
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto")
    return boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
        aws_session_token="testing",  # noqa: S106 - moto's fake credentials
        region_name="us-east-1",
    )


def open_s3_on_moto(session: Any) -> Iterator[StagingStore]:
    from moto import mock_aws

    from cairn.aws.s3_staging import S3StagingStore

    with mock_aws():
        key_id = session.client("kms").create_key()["KeyMetadata"]["KeyId"]
        s3 = session.client("s3")
        s3.create_bucket(Bucket="cairn-rollouts")
        yield S3StagingStore(s3, bucket="cairn-rollouts", kms_key_id=key_id)


@pytest.fixture(params=["filesystem", "s3"])
def staging(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StagingStore]:
    if request.param == "filesystem":
        yield from open_filesystem(tmp_path)
    else:
        yield from open_s3_on_moto(request.getfixturevalue("aws_session"))


def test_a_staged_payload_reads_back_byte_for_byte(staging: StagingStore) -> None:
    binary = bytes(range(256)) + PAYLOAD

    staging.put(SCOPE, "ro-1", binary)
    staging.put(SCOPE, "ro-empty", b"")

    assert staging.get(SCOPE, "ro-1") == binary
    assert staging.get(SCOPE, "ro-empty") == b""


def test_the_key_is_the_shared_scheme_and_carries_no_user_text(staging: StagingStore) -> None:
    key = staging.put(SCOPE, "ro-1", PAYLOAD)

    assert key == staging_key(SCOPE, "ro-1")
    assert key.startswith("rollouts/")
    assert key.endswith("/ro-1")
    assert SCOPE.actor_id not in key
    assert "12345" not in key
    assert SCOPE.memory_id not in key
    assert staging_key(OTHER_ACTOR, "ro-1") != key


def test_staging_the_same_bytes_again_is_a_no_op(staging: StagingStore) -> None:
    first = staging.put(SCOPE, "ro-1", PAYLOAD)

    again = staging.put(SCOPE, "ro-1", PAYLOAD)

    assert again == first
    assert staging.get(SCOPE, "ro-1") == PAYLOAD


def test_different_bytes_under_a_staged_id_conflict_and_change_nothing(
    staging: StagingStore,
) -> None:
    staging.put(SCOPE, "ro-1", PAYLOAD)

    with pytest.raises(RolloutConflictError) as raised:
        staging.put(SCOPE, "ro-1", PAYLOAD + b" (edited)")

    assert isinstance(raised.value, ConflictError)
    assert raised.value.retryable is False
    assert staging.get(SCOPE, "ro-1") == PAYLOAD


def test_an_unstaged_rollout_is_not_found(staging: StagingStore) -> None:
    with pytest.raises(RolloutNotFoundError) as raised:
        staging.get(SCOPE, "ro-404")

    assert isinstance(raised.value, NotFoundError)
    assert raised.value.rollout_id == "ro-404"


def test_another_scope_cannot_see_or_block_a_staged_rollout(staging: StagingStore) -> None:
    staging.put(SCOPE, "ro-1", PAYLOAD)

    with pytest.raises(RolloutNotFoundError):
        staging.get(OTHER_ACTOR, "ro-1")
    staging.put(OTHER_ACTOR, "ro-1", b"their own evidence")

    assert staging.get(OTHER_ACTOR, "ro-1") == b"their own evidence"
    assert staging.get(SCOPE, "ro-1") == PAYLOAD


def test_a_deleted_rollout_is_gone_and_deleting_again_is_harmless(
    staging: StagingStore,
) -> None:
    staging.put(SCOPE, "ro-1", PAYLOAD)
    staging.put(SCOPE, "ro-2", PAYLOAD)

    staging.delete(SCOPE, "ro-1")
    staging.delete(SCOPE, "ro-1")
    staging.delete(SCOPE, "ro-never-staged")

    with pytest.raises(RolloutNotFoundError):
        staging.get(SCOPE, "ro-1")
    assert staging.get(SCOPE, "ro-2") == PAYLOAD


@pytest.mark.parametrize(
    "rollout_id",
    ["", "../escape", "a/b", ".hidden", "ro 1", "ro-1\n", "ro-é", "r" * 129],
)
def test_a_malformed_rollout_id_is_refused_and_nothing_is_staged(
    staging: StagingStore, rollout_id: str
) -> None:
    with pytest.raises(InvalidInputError, match="rollout id must be"):
        staging.put(SCOPE, rollout_id, PAYLOAD)
    with pytest.raises(InvalidInputError):
        staging.get(SCOPE, rollout_id)
    with pytest.raises(InvalidInputError):
        staging.delete(SCOPE, rollout_id)

    assert staging.erase_scope(SCOPE) == 0


def test_an_oversized_payload_is_refused_and_nothing_is_staged(staging: StagingStore) -> None:
    with pytest.raises(InvalidInputError, match="limit"):
        staging.put(SCOPE, "ro-big", b"x" * (MAX_PAYLOAD_BYTES + 1))

    with pytest.raises(RolloutNotFoundError):
        staging.get(SCOPE, "ro-big")


def test_erasing_a_scope_destroys_its_payloads_and_only_those(staging: StagingStore) -> None:
    for rollout_id in ("ro-1", "ro-2", "ro-3"):
        staging.put(SCOPE, rollout_id, PAYLOAD)
    staging.put(OTHER_ACTOR, "ro-1", b"kept")

    erased = staging.erase_scope(SCOPE)

    assert erased == 3
    for rollout_id in ("ro-1", "ro-2", "ro-3"):
        with pytest.raises(RolloutNotFoundError):
            staging.get(SCOPE, rollout_id)
    assert staging.get(OTHER_ACTOR, "ro-1") == b"kept"
    assert staging.erase_scope(SCOPE) == 0
