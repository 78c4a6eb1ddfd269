"""What the erasure tests share: where each backend stages payloads, and every byte a backend
keeps (to prove an erased thing left none)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from cairn.ports import StagingStore


def backend_staging(backend_name: str, tmp_path: Path) -> Iterator[StagingStore]:
    """Where this backend's deployments stage payloads: S3 on moto beside DynamoDB (moto is
    already active for the stores), a folder beside the file otherwise."""
    if backend_name == "dynamodb":
        import boto3

        from cairn.aws.s3_staging import S3StagingStore

        session = boto3.session.Session(region_name="us-east-1")
        key_id = session.client("kms").create_key()["KeyMetadata"]["KeyId"]
        s3 = session.client("s3")
        s3.create_bucket(Bucket="cairn-rollouts")
        yield S3StagingStore(s3, bucket="cairn-rollouts", kms_key_id=key_id)
        return
    from cairn.local.fs_staging import FilesystemStagingStore

    yield FilesystemStagingStore(tmp_path / "staging")


def stored_bytes(backend_name: str, tmp_path: Path) -> bytes:
    """Every byte the backend keeps: the database file, WAL and shared memory, every staged
    file and the persisted recall index snapshots (every file under ``tmp_path``); or every
    item of every table and every object of every bucket on moto."""
    if backend_name == "sqlite":
        files = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert any(p.name == "cairn.db-wal" for p in files) or files
        return b"".join(p.read_bytes() for p in files)
    import boto3

    session = boto3.session.Session(region_name="us-east-1")
    dynamodb, s3 = session.client("dynamodb"), session.client("s3")
    parts: list[bytes] = []
    for table in json.loads((tmp_path / "dynamodb-tables.json").read_text()).values():
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            parts.append(repr(page["Items"]).encode())
    for bucket in s3.list_buckets()["Buckets"]:
        for listed in s3.list_objects_v2(Bucket=bucket["Name"]).get("Contents", []):
            body = s3.get_object(Bucket=bucket["Name"], Key=listed["Key"])["Body"].read()
            parts.append(body)
    return b"".join(parts)
