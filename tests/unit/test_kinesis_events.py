"""The Kinesis sink on moto: a batch Kinesis takes only in part is completed by sending again
only the events it refused (no event put twice by the sink itself), and a stream that stays
refusing is a retryable error after a few attempts; a missing stream is a configuration error
that names it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.aws.kinesis_events import KinesisEventSink
from cairn.errors import ConfigurationError, StoreUnavailableError

REGION = "us-east-1"


@pytest.fixture
def kinesis(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        client = boto3.client("kinesis", region_name=REGION)
        client.create_stream(StreamName="records", ShardCount=1)
        arn = client.describe_stream_summary(StreamName="records")["StreamDescriptionSummary"][
            "StreamARN"
        ]
        yield client, arn


def _event(n: int) -> dict[str, Any]:
    return {"eventId": f"m/a/r{n}/1/created", "memoryId": "m", "actorId": "a", "sequence": n}


def _read(client: Any) -> list[dict[str, Any]]:
    (shard,) = client.list_shards(StreamName="records")["Shards"]
    iterator = client.get_shard_iterator(
        StreamName="records", ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    return [json.loads(r["Data"]) for r in client.get_records(ShardIterator=iterator)["Records"]]


class RefusingFirst:
    """The real moto client, but the first PutRecords answers that Kinesis took only the even
    events (as a throttled shard answers: ErrorCode on the refused records)."""

    def __init__(self, client: Any, refusals: int = 1) -> None:
        self._client = client
        self.refusals = refusals
        self.sent: list[int] = []

    def put_records(self, **request: Any) -> dict[str, Any]:
        records = request["Records"]
        self.sent.append(len(records))
        if self.refusals:
            self.refusals -= 1
            taken = [r for r in records if json.loads(r["Data"])["sequence"] % 2 == 0]
            self._client.put_records(StreamARN=request["StreamARN"], Records=taken)
            results = [
                {"SequenceNumber": "1", "ShardId": "s"}
                if json.loads(r["Data"])["sequence"] % 2 == 0
                else {"ErrorCode": "ProvisionedThroughputExceededException"}
                for r in records
            ]
            return {"FailedRecordCount": len(records) - len(taken), "Records": results}
        answer: dict[str, Any] = self._client.put_records(**request)
        return answer


def test_a_partly_refused_batch_is_completed_without_doubling(kinesis: tuple[Any, str]) -> None:
    client, arn = kinesis
    refusing = RefusingFirst(client)

    KinesisEventSink(refusing).put(arn, [_event(n) for n in range(1, 7)])

    assert refusing.sent == [6, 3]  # the second attempt carries only the refused three
    assert sorted(e["sequence"] for e in _read(client)) == [1, 2, 3, 4, 5, 6]


def test_a_stream_that_keeps_refusing_is_a_retryable_error(kinesis: tuple[Any, str]) -> None:
    client, arn = kinesis

    with pytest.raises(StoreUnavailableError, match="deliver them again"):
        KinesisEventSink(RefusingFirst(client, refusals=99)).put(arn, [_event(1), _event(2)])


def test_a_missing_stream_is_a_configuration_error_naming_it(kinesis: tuple[Any, str]) -> None:
    client, arn = kinesis
    gone = arn.replace("stream/records", "stream/missing")

    with pytest.raises(ConfigurationError, match="stream/missing"):
        KinesisEventSink(client).put(gone, [_event(1)])
