"""``S3ObjectReader``: small objects read from one S3 bucket, re-read only when they changed.

``read`` sends a conditional ``GetObject`` (``IfNoneMatch`` the ETag the caller holds): S3
answers 304 without a body when the object did not change, so an unchanged object costs one
small request and no download. The boto3 client is injected; botocore errors are translated
into cairn errors here and nowhere else, always chained. The caller's role needs
``s3:GetObject`` on the bucket (and ``s3:ListBucket``, or a missing object reads as refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cairn.errors import ConfigurationError, StoreUnavailableError

_UNCHANGED = frozenset({"304", "NotModified"})
_MISSING = frozenset({"NoSuchKey", "404"})


@dataclass(frozen=True, slots=True)
class S3Object:
    """An object as read: its bytes (``None`` when it had not changed: nothing was
    downloaded), its ETag and its version id."""

    body: bytes | None
    etag: str
    version_id: str | None


class S3ObjectReader:
    """Reads objects of ``bucket`` through an injected boto3 S3 client."""

    def __init__(self, client: Any, *, bucket: str) -> None:
        self._client = client
        self.bucket = bucket

    def read(self, key: str, *, if_none_match: str | None = None) -> S3Object | None:
        """The object at ``key``, or ``None`` if there is none; with ``if_none_match`` an
        object still at that ETag comes back without its body. A refusal (permissions, a
        wrong bucket) is ``ConfigurationError``, S3 out of reach ``StoreUnavailableError``."""
        conditional = {"IfNoneMatch": if_none_match} if if_none_match is not None else {}
        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=key, **conditional)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _UNCHANGED and if_none_match is not None:
                return S3Object(body=None, etag=if_none_match, version_id=None)
            if code in _MISSING:
                return None
            raise ConfigurationError(
                f"cannot read s3://{self.bucket}/{key} ({code}); check the bucket name and "
                "the caller's s3:GetObject permission"
            ) from exc
        except BotoCoreError as exc:
            raise StoreUnavailableError(
                f"S3 is unreachable; s3://{self.bucket}/{key} could not be read"
            ) from exc
        body: bytes = answer["Body"].read()
        return S3Object(body=body, etag=str(answer["ETag"]), version_id=answer.get("VersionId"))
