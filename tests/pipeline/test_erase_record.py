"""Erasing one record on AWS (moto), through the functions' own wiring: the extracted fact, the
session summary and the turn that said it go, a later rollout whose staged payload still holds
the turn is purged from S3, and afterwards no byte of the sentence is in any table item, any
object of any bucket or any message still queued; the queued notice of the purged rollout then
finds nothing to extract (``cairn.erasure_lineage``)."""

from __future__ import annotations

from typing import Any

from cairn.clock import FixedClock
from cairn.erasure_lineage import erase_record
from tests.pipeline.aws import Deployment, LambdaRuntime
from tests.pipeline.test_erase_actor import ALICE, BOB, SECRET, converse, staged

PASSPORT = "X1234567"


def queued(session: Any, deployment: Deployment) -> list[str]:
    """The bodies of every message waiting in the work queue and its dead-letter queue, read
    without consuming them (visible again at once)."""
    sqs = session.client("sqs")
    bodies: list[str] = []
    for url in (deployment.queue_url, deployment.dead_letter_url):
        found = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0)
        bodies += [m["Body"] for m in found.get("Messages", [])]
    return bodies


def drain(extraction: LambdaRuntime) -> None:
    """Deliver until the queue is empty; no delivery fails."""
    while messages := extraction.receive():
        assert extraction.deliver(messages) == []


def everything(session: Any, deployment: Deployment, *, queues: bool = False) -> str:
    """Every table item and object, and (``queues``) every queued message. Reading a queue
    counts as a receive toward its redrive to the dead-letter queue, so a test reads it once."""
    dynamodb = session.client("dynamodb")
    parts = [repr(staged(session, deployment))]
    for table in dynamodb.list_tables()["TableNames"]:
        for page in dynamodb.get_paginator("scan").paginate(TableName=table):
            parts.append(repr(page["Items"]))
    s3 = session.client("s3")
    for bucket in s3.list_buckets()["Buckets"]:
        for listed in s3.list_objects_v2(Bucket=bucket["Name"]).get("Contents", []):
            body = s3.get_object(Bucket=bucket["Name"], Key=listed["Key"])["Body"].read()
            parts.append(repr(body))
    return "\n".join(parts + (queued(session, deployment) if queues else []))


def assert_gone(stored: str) -> None:
    at = stored.find(PASSPORT)
    assert at == -1, f"...{stored[max(0, at - 400) : at + 100]}..."  # ids and keys only


def test_erasing_a_record_on_aws_leaves_no_byte_of_the_sentence_anywhere(
    deployment: Deployment, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    converse(wiring.pipeline(), ALICE, clock)
    converse(wiring.pipeline(), BOB, clock)
    drain(extraction_lambda)
    stores = wiring.stores()
    (fact,) = [
        v
        for v in stores.records.list_records(ALICE).items
        if PASSPORT in v.content and v.strategy != "summary"
    ]
    converse(wiring.pipeline(), ALICE, clock)  # staged and queued, not extracted yet
    assert PASSPORT in everything(session, deployment)

    erased = erase_record(stores, ALICE, fact.record_id, staging=wiring.staging(), clock=clock)

    assert erased.events >= 1
    assert erased.rollouts >= 1
    after = everything(session, deployment, queues=True)
    assert_gone(after)
    assert SECRET[BOB] in after  # the scan reads what is stored
    assert "rollout-notice" in after  # and the queued notices
    drain(extraction_lambda)  # the purged rollout's notice finds nothing to extract
    assert extraction_lambda.dead_letters() == []
    assert_gone(everything(session, deployment))
