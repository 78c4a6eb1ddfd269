"""Record streaming's event sink on Kinesis (``cairn.streaming.delivery.EventSink``).

PutRecords of up to 500 events, each one JSON object, partition key the event's scope
(``<memoryId>|<actorId>``: one scope's events land on one shard). Records Kinesis refuses in a
batch (throttled, ``FailedRecordCount``) are sent again a few times, then the put raises
``StoreUnavailableError`` (retryable): the deliverer delivers the page again, and consumers
recognise what they had by ``eventId``. PutRecords does not promise order inside one batch;
each event carries its scope ``sequence`` to order by.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cairn.errors import ConfigurationError, StoreUnavailableError

MAX_RECORDS = 500
_ATTEMPTS = 4


class KinesisEventSink:
    """``client`` is a boto3 Kinesis client."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def put(self, stream_arn: str, events: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(events), MAX_RECORDS):
            self._put_batch(stream_arn, events[start : start + MAX_RECORDS])

    def _put_batch(self, stream_arn: str, events: Sequence[dict[str, Any]]) -> None:
        pending = [
            {
                "Data": json.dumps(event, sort_keys=True).encode(),
                "PartitionKey": f"{event['memoryId']}|{event['actorId']}",
            }
            for event in events
        ]
        for attempt in range(_ATTEMPTS):
            if attempt:
                time.sleep(0.1 * 2**attempt)
            try:
                answer = self._client.put_records(StreamARN=stream_arn, Records=pending)
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if code in {"ResourceNotFoundException", "AccessDeniedException"}:
                    raise ConfigurationError(
                        f"Kinesis refused PutRecords to {stream_arn} ({code}): check that the "
                        "memory's stream exists and that the delivery function may put to it"
                    ) from exc
                continue
            except BotoCoreError:
                continue
            results = answer.get("Records", [])
            pending = [r for r, res in zip(pending, results, strict=True) if "ErrorCode" in res]
            if not pending:
                return
        raise StoreUnavailableError(
            f"Kinesis did not take {len(pending)} events to {stream_arn}; deliver them again"
        )
