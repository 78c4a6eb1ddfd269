"""What only the S3 staging store promises: SSE-KMS under the configured key, and S3's faults
translated into cairn errors. Faults a fake cannot express use botocore's ``Stubber``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")

from botocore.stub import Stubber  # noqa: E402 - only once boto3 is known to be installed

from cairn.aws.s3_staging import S3StagingStore  # noqa: E402
from cairn.errors import (  # noqa: E402
    ConfigurationError,
    StoreUnavailableError,
)
from cairn.models import Scope  # noqa: E402
from cairn.rollout.staging_keys import scope_prefix, staging_key  # noqa: E402

SCOPE = Scope(memory_id="m1", actor_id="tg:12345")
BUCKET = "cairn-rollouts"


@pytest.fixture(scope="module")
def session() -> Any:
    return boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
        region_name="us-east-1",
    )


@pytest.fixture
def stubbed(session: Any) -> Iterator[tuple[S3StagingStore, Stubber]]:
    client = session.client("s3")
    with Stubber(client) as stubber:
        yield S3StagingStore(client, bucket=BUCKET, kms_key_id="key-1"), stubber
        stubber.assert_no_pending_responses()


def test_objects_are_encrypted_with_the_configured_kms_key(session: Any) -> None:
    with moto.mock_aws():
        key_id = session.client("kms").create_key()["KeyMetadata"]["KeyId"]
        s3 = session.client("s3")
        s3.create_bucket(Bucket=BUCKET)

        key = S3StagingStore(s3, bucket=BUCKET, kms_key_id=key_id).put(SCOPE, "ro-1", b"x")

        head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ServerSideEncryption"] == "aws:kms"
    assert head["SSEKMSKeyId"].endswith(key_id)


def test_without_a_key_objects_take_the_buckets_default_encryption(session: Any) -> None:
    with moto.mock_aws():
        s3 = session.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_encryption(
            Bucket=BUCKET,
            ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
            },
        )
        store = S3StagingStore(s3, bucket=BUCKET)

        key = store.put(SCOPE, "ro-1", b"x")
        head = s3.head_object(Bucket=BUCKET, Key=key)
        again = store.put(SCOPE, "ro-1", b"x")  # a retried put is still recognised

    assert head["ServerSideEncryption"] == "AES256"
    assert "SSEKMSKeyId" not in head
    assert again == key


def test_a_put_is_a_conditional_create_under_sse_kms(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    key = staging_key(SCOPE, "ro-1")
    stubber.add_response(
        "put_object",
        {},
        {
            "Bucket": BUCKET,
            "Key": key,
            "Body": b"evidence",
            "ServerSideEncryption": "aws:kms",
            "SSEKMSKeyId": "key-1",
            "BucketKeyEnabled": True,
            "IfNoneMatch": "*",
        },
    )

    assert store.put(SCOPE, "ro-1", b"evidence") == key


def test_a_throttled_put_is_a_retryable_store_error(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_client_error("put_object", service_error_code="SlowDown", http_status_code=503)

    with pytest.raises(StoreUnavailableError) as raised:
        store.put(SCOPE, "ro-1", b"evidence")

    assert raised.value.retryable is True


def test_a_refused_kms_key_is_a_configuration_error(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code="AccessDenied", http_status_code=403)

    with pytest.raises(ConfigurationError, match="KMS key") as raised:
        store.get(SCOPE, "ro-1")

    assert raised.value.retryable is False


def test_a_put_blocked_by_a_payload_deleted_meanwhile_creates_again(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_client_error(
        "put_object", service_error_code="PreconditionFailed", http_status_code=412
    )
    stubber.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
    stubber.add_response("put_object", {})

    assert store.put(SCOPE, "ro-1", b"evidence") == staging_key(SCOPE, "ro-1")


def test_erasing_a_scope_follows_every_listing_page(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    prefix = scope_prefix(SCOPE)
    pages = [[f"{prefix}ro-{i}" for i in range(1000)], [f"{prefix}ro-1000"]]
    stubber.add_response(
        "list_objects_v2",
        {
            "Contents": [{"Key": k} for k in pages[0]],
            "IsTruncated": True,
            "NextContinuationToken": "page-2",
        },
        {"Bucket": BUCKET, "Prefix": prefix},
    )
    stubber.add_response(
        "delete_objects",
        {},
        {"Bucket": BUCKET, "Delete": {"Objects": [{"Key": k} for k in pages[0]], "Quiet": True}},
    )
    stubber.add_response(
        "list_objects_v2",
        {"Contents": [{"Key": k} for k in pages[1]], "IsTruncated": False},
        {"Bucket": BUCKET, "Prefix": prefix, "ContinuationToken": "page-2"},
    )
    stubber.add_response(
        "delete_objects",
        {},
        {"Bucket": BUCKET, "Delete": {"Objects": [{"Key": k} for k in pages[1]], "Quiet": True}},
    )

    assert store.erase_scope(SCOPE) == 1001


def test_payloads_s3_refuses_to_delete_fail_the_erase_loudly(
    stubbed: tuple[S3StagingStore, Stubber],
) -> None:
    store, stubber = stubbed
    key = staging_key(SCOPE, "ro-1")
    stubber.add_response("list_objects_v2", {"Contents": [{"Key": key}], "IsTruncated": False})
    stubber.add_response(
        "delete_objects", {"Errors": [{"Key": key, "Code": "AccessDenied", "Message": "no"}]}
    )

    with pytest.raises(StoreUnavailableError, match="run the erase again"):
        store.erase_scope(SCOPE)
