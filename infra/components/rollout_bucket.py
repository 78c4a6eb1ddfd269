"""The bucket that holds staged rollouts (``cairn.aws.s3_staging.S3StagingStore``)."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cairn.aws.s3_index_objects import KEY_PREFIX as INDEX_PREFIX
from cairn.rollout.staging_keys import KEY_PREFIX
from infra.components.encryption import RETAINED

# A day after its last rewrite: S3 runs expiry about daily, so an object lives 1-2 days at most.
INDEX_RETENTION_DAYS = 1


class RolloutBucket(Construct):
    """Private, encrypted (``key``, else SSE-S3), TLS-only, unversioned; unconsumed rollouts
    expire, and so do recall index objects (``recall-index/``) a day after their last write.

    Consumers delete a rollout once it is consumed; the lifecycle rule is the backstop that
    expires whatever was never consumed after ``retention_days``. Versioning stays off so that
    a delete (and an erase) destroys the payload instead of hiding it behind a delete marker.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, key: kms.IKey | None, retention_days: int
    ) -> None:
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            **bucket_encryption(key),
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            versioned=False,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-unconsumed-rollouts",
                    prefix=KEY_PREFIX,
                    expiration=Duration.days(retention_days),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                ),
                # Recall index objects are derived and rebuilt by the first recall that finds
                # one missing; expiry bounds how long one a crashed rebuild left stale (and
                # perhaps holding erased bytes) can stay (docs/dynamodb.md).
                s3.LifecycleRule(
                    id="expire-recall-index-objects",
                    prefix=INDEX_PREFIX,
                    expiration=Duration.days(INDEX_RETENTION_DAYS),
                ),
            ],
            # Emptying it is part of the documented teardown; CloudFormation cannot delete a
            # non-empty bucket, and auto-delete would add a custom-resource Lambda.
            removal_policy=RETAINED,
        )
        Validations.of(self.bucket).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-S1",
                reason="Payloads are short-lived and encrypted; audit access with CloudTrail "
                "data events when needed instead of a log bucket that costs storage at rest.",
            )
        )


def bucket_encryption(key: kms.IKey | None) -> dict[str, object]:
    """SSE-KMS with ``key`` and a bucket key (one KMS request per data key, not per object), or
    SSE-S3 when the stack uses AWS-managed encryption."""
    if key is None:
        return {"encryption": s3.BucketEncryption.S3_MANAGED}
    return {
        "encryption": s3.BucketEncryption.KMS,
        "encryption_key": key,
        "bucket_key_enabled": True,
    }
