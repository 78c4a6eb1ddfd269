"""Staged rollouts in S3: the AWS ``StagingStore``, with its boto3 client injected.

Every object is written with SSE-KMS under the configured key (or, with no key, under the
bucket's default encryption: SSE-S3 in a stack with AWS-managed encryption) and
``If-None-Match: *``, so S3
itself refuses to replace a staged payload: a retried put of the same bytes is recognised by
reading the object back, different bytes raise ``RolloutConflictError``. Keys come from
``cairn.rollout.staging_keys`` and never carry user text. The bucket must not be versioned
(the CDK stack does not version it): with versioning, ``delete`` and ``erase_scope`` would only
hide content behind delete markers instead of destroying it.

The caller's role needs ``s3:PutObject``, ``s3:GetObject``, ``s3:DeleteObject`` and
``s3:ListBucket`` on the bucket, and ``kms:GenerateDataKey`` / ``kms:Decrypt`` on the key (if
any).
Without ``s3:ListBucket`` S3 reports a missing object as AccessDenied, which surfaces as
``ConfigurationError`` instead of ``RolloutNotFoundError``.

``botocore`` errors are translated into cairn errors here and nowhere else, always chained.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    NoCredentialsError,
    ReadTimeoutError,
)

from cairn.errors import (
    CairnError,
    ConfigurationError,
    RolloutConflictError,
    RolloutNotFoundError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from cairn.models import Scope
from cairn.rollout.staging_keys import check_payload, scope_prefix, staging_key

# Codes S3 documents as transient; a 409 ConditionalRequestConflict means a concurrent
# conditional write to the same key is in flight and the call should simply be retried.
_RETRYABLE_CODES = frozenset(
    {
        "ConditionalRequestConflict",
        "InternalError",
        "OperationAborted",
        "RequestTimeout",
        "ServiceUnavailable",
        "SlowDown",
        "Throttling",
        "ThrottlingException",
    }
)
_NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


class S3Client(Protocol):
    """The subset of a boto3 S3 client this store calls."""

    def put_object(self, **kwargs: Any) -> dict[str, Any]: ...
    def get_object(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_object(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_objects(self, **kwargs: Any) -> dict[str, Any]: ...
    def list_objects_v2(self, **kwargs: Any) -> dict[str, Any]: ...


class S3StagingStore:
    """Write-once staged payloads in ``bucket``, encrypted with the KMS key ``kms_key_id``
    (the bucket's default encryption when it is empty)."""

    def __init__(self, client: S3Client, *, bucket: str, kms_key_id: str = "") -> None:
        self._client = client
        self.bucket = bucket
        self.kms_key_id = kms_key_id

    def put(self, scope: Scope, rollout_id: str, payload: bytes) -> str:
        """Stage ``payload`` and return its key; see ``cairn.ports.StagingStore.put``."""
        key = staging_key(scope, rollout_id)
        check_payload(payload)
        # Two rounds: if the object that blocked our create is deleted (consumed) before we
        # can compare it, the create is simply tried again.
        for _ in range(2):
            if self._create(key, payload):
                return key
            try:
                existing = self._read(key, rollout_id)
            except RolloutNotFoundError:
                continue
            if existing != payload:
                raise RolloutConflictError(rollout_id)
            return key
        raise StoreUnavailableError(
            f"rollout {rollout_id!r} was deleted while it was being staged again; retry the put"
        )

    def get(self, scope: Scope, rollout_id: str) -> bytes:
        """The staged bytes; ``RolloutNotFoundError`` if nothing is staged under that id."""
        return self._read(staging_key(scope, rollout_id), rollout_id)

    def delete(self, scope: Scope, rollout_id: str) -> None:
        """Remove the staged payload; an absent one is a no-op (S3 deletes are idempotent)."""
        key = staging_key(scope, rollout_id)
        with _translated_errors(self.bucket):
            self._client.delete_object(Bucket=self.bucket, Key=key)

    def erase_scope(self, scope: Scope) -> int:
        """Delete every payload staged in ``scope``; returns how many were deleted."""
        erased = 0
        for keys in self._pages_of_keys(scope_prefix(scope)):
            with _translated_errors(self.bucket):
                response = self._client.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True},
                )
            if response.get("Errors"):
                codes = sorted({str(error.get("Code")) for error in response["Errors"]})
                raise StoreUnavailableError(
                    f"S3 kept {len(response['Errors'])} staged payloads of the scope "
                    f"(codes {', '.join(codes)}); run the erase again"
                )
            erased += len(keys)
        return erased

    def _create(self, key: str, payload: bytes) -> bool:
        """Put the object unless the key exists; False when it already did."""
        try:
            with _translated_errors(self.bucket, passthrough=frozenset({"PreconditionFailed"})):
                self._client.put_object(
                    Bucket=self.bucket, Key=key, Body=payload, IfNoneMatch="*", **self._sse()
                )
        except ClientError:
            return False
        return True

    def _sse(self) -> dict[str, Any]:
        """SSE-KMS under the configured key, or nothing: the bucket's default encryption."""
        if not self.kms_key_id:
            return {}
        return {
            "ServerSideEncryption": "aws:kms",
            "SSEKMSKeyId": self.kms_key_id,
            "BucketKeyEnabled": True,
        }

    def _read(self, key: str, rollout_id: str) -> bytes:
        try:
            with _translated_errors(self.bucket, passthrough=_NOT_FOUND_CODES):
                response = self._client.get_object(Bucket=self.bucket, Key=key)
                body: bytes = response["Body"].read()
        except ClientError as exc:
            raise RolloutNotFoundError(rollout_id) from exc
        return body

    def _pages_of_keys(self, prefix: str) -> Iterator[list[str]]:
        token: str | None = None
        while True:
            request: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
            if token:
                request["ContinuationToken"] = token
            with _translated_errors(self.bucket):
                page = self._client.list_objects_v2(**request)
            keys = [str(item["Key"]) for item in page.get("Contents", ())]
            if keys:
                yield keys
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


@contextmanager
def _translated_errors(bucket: str, *, passthrough: frozenset[str] = frozenset()) -> Iterator[None]:
    """Translate botocore failures into cairn errors; codes in ``passthrough`` stay raw."""
    try:
        yield
    except ClientError as exc:
        if _error_code(exc) in passthrough:
            raise
        raise _translate_client_error(exc, bucket) from exc
    except (ConnectTimeoutError, ReadTimeoutError) as exc:
        raise StoreTimeoutError(f"S3 did not answer in time for bucket {bucket!r}; retry") from exc
    except NoCredentialsError as exc:
        raise ConfigurationError(
            "no AWS credentials were found for S3; configure a profile, role or environment keys"
        ) from exc
    except BotoCoreError as exc:
        raise StoreUnavailableError(f"S3 is unreachable ({type(exc).__name__}); retry") from exc


def _translate_client_error(exc: ClientError, bucket: str) -> CairnError:
    code = _error_code(exc)
    if code in _RETRYABLE_CODES or _http_status(exc) >= 500:
        return StoreUnavailableError(f"S3 is busy or failing (code {code}); retry the call")
    return ConfigurationError(
        f"S3 refused the call on bucket {bucket!r} (code {code}); check the bucket name, the "
        "KMS key id and that the caller's role may use both"
    )


# The same translation for the other adapters over this bucket (``s3_index_objects``).
translated_errors = _translated_errors
