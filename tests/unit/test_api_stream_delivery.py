"""A deployed API accepts only the record stream its delivery function may put to.

The stack sets ``CAIRN_RECORD_STREAM_ARN`` on the API (``ApiSettings.delivery_streams``): a
memory naming another stream would be accepted and then fail every delivery, so CreateMemory
and UpdateMemory refuse it with a 400 naming the field and the stream they deliver to, and
change nothing. ``cairn serve`` (no setting) stores any Kinesis stream."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.api import ApiSettings
from cairn.clock import FixedClock
from cairn.store.memory import InMemoryBackend
from tests.unit.api_harness import Caller, build_api

DEPLOYED = "arn:aws:kinesis:us-east-1:123456789012:stream/memory-records"
OTHER = "arn:aws:kinesis:us-east-1:123456789012:stream/elsewhere"


def _stream(arn: str) -> dict[str, Any]:
    content = [{"type": "MEMORY_RECORDS", "level": "METADATA_ONLY"}]
    return {"resources": [{"kinesis": {"dataStreamArn": arn, "contentConfigurations": content}}]}


def _caller(streams: frozenset[str] | None) -> Caller:
    clock = FixedClock()
    stores = InMemoryBackend(clock).stores()
    return Caller(build_api(stores, clock, ApiSettings(delivery_streams=streams)))


def _create(call: Caller, name: str, **extra: Any) -> Any:
    return call("POST", "/memories/create", {"name": name, "eventExpiryDuration": 7, **extra})


def test_a_deployed_api_takes_its_own_stream_and_refuses_another() -> None:
    call = _caller(frozenset({DEPLOYED}))

    made = _create(call, "mine", streamDeliveryResources=_stream(DEPLOYED))
    refused = _create(call, "theirs", streamDeliveryResources=_stream(OTHER))

    assert made.status == 202, made.body
    assert refused.status == 400
    assert "dataStreamArn" in refused.body["message"]
    assert DEPLOYED in refused.body["message"]
    listed = call("POST", "/memories/", {})
    assert [m["id"].split("-")[0] for m in listed.body["memories"]] == ["mine"]
    memory_id = made.body["memory"]["id"]
    moved = call(
        "PUT", f"/memories/{memory_id}/update", {"streamDeliveryResources": _stream(OTHER)}
    )
    assert moved.status == 400
    kept = call("GET", f"/memories/{memory_id}/details")
    assert kept.body["memory"]["streamDeliveryResources"] == _stream(DEPLOYED)


@pytest.mark.parametrize("streams", [frozenset(), None], ids=["no-streaming", "cairn-serve"])
def test_without_a_delivery_function_only_cairn_serve_stores_a_stream(
    streams: frozenset[str] | None,
) -> None:
    call = _caller(streams)

    answer = _create(call, "mine", streamDeliveryResources=_stream(OTHER))

    if streams is None:
        assert answer.status == 202
        assert answer.body["memory"]["streamDeliveryResources"] == _stream(OTHER)
    else:
        assert answer.status == 400
        assert "-c recordStreamArn" in answer.body["message"]
