"""Recall index objects in S3: the AWS ``IndexObjectStore``, with its boto3 client injected.

One object per (scope, embedding space) at ``recall-index/<scope digest>/<space digest>``: the
scope and the embedder key appear only as truncated sha256 digests (keys end up in CloudTrail,
access logs and inventories), and all of a scope's objects share one prefix, so erasing a scope
is a prefix delete. An object is overwritten in place; the bucket must not be versioned (the
stack's rollout bucket is not), or an overwrite or erase would keep the old bytes as a
noncurrent version. Objects are written with SSE-KMS under the configured key (or the bucket's
default encryption).

Reads go through ``S3ObjectReader`` (``If-None-Match``: a 304 costs no download). A role that
recalls needs ``s3:GetObject`` and ``s3:PutObject`` on ``recall-index/*`` and ``s3:ListBucket``
on the bucket (a missing object then reads as missing, not refused); one that erases also
``s3:DeleteObject``; both ``kms:GenerateDataKey`` / ``kms:Decrypt`` on the key (if any).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cairn.aws.s3_objects import S3ObjectReader
from cairn.aws.s3_staging import translated_errors
from cairn.errors import StoreUnavailableError
from cairn.models import Scope
from cairn.ports import IndexObject

KEY_PREFIX = "recall-index/"


def scope_prefix(scope: Scope) -> str:
    """The key prefix (ending in ``/``) of every index object of ``scope``."""
    material = json.dumps([scope.memory_id, scope.actor_id], separators=(",", ":"))
    return f"{KEY_PREFIX}{hashlib.sha256(material.encode('utf-8')).hexdigest()[:32]}/"


def object_key(scope: Scope, space: str) -> str:
    return scope_prefix(scope) + hashlib.sha256(space.encode("utf-8")).hexdigest()[:16]


class S3IndexObjects:
    """Index objects in ``bucket`` under ``recall-index/``, encrypted with ``kms_key_id``."""

    def __init__(self, client: Any, *, bucket: str, kms_key_id: str = "") -> None:
        self._client = client
        self.bucket = bucket
        self.kms_key_id = kms_key_id
        self._reader = S3ObjectReader(client, bucket=bucket)

    def read(
        self, scope: Scope, space: str, *, if_none_match: str | None = None
    ) -> IndexObject | None:
        found = self._reader.read(object_key(scope, space), if_none_match=if_none_match)
        return IndexObject(body=found.body, etag=found.etag) if found is not None else None

    def write(self, scope: Scope, space: str, body: bytes) -> str:
        sse: dict[str, Any] = {}
        if self.kms_key_id:
            sse = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self.kms_key_id}
            sse["BucketKeyEnabled"] = True
        with translated_errors(self.bucket):
            answer = self._client.put_object(
                Bucket=self.bucket, Key=object_key(scope, space), Body=body, **sse
            )
        return str(answer["ETag"])

    def erase_scope(self, scope: Scope) -> int:
        erased, token = 0, None
        while True:
            request: dict[str, Any] = {"Bucket": self.bucket, "Prefix": scope_prefix(scope)}
            if token:
                request["ContinuationToken"] = token
            with translated_errors(self.bucket):
                page = self._client.list_objects_v2(**request)
                keys = [{"Key": str(item["Key"])} for item in page.get("Contents", ())]
                if keys:
                    answer = self._client.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True}
                    )
                    if answer.get("Errors"):
                        raise StoreUnavailableError(
                            f"S3 kept {len(answer['Errors'])} recall index objects of the "
                            "scope; run the erase again"
                        )
            erased += len(keys)
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return erased
