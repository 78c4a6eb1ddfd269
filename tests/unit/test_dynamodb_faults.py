"""Faults a fake cannot express: throttling, timeouts, unprocessed keys (botocore ``Stubber``
and event hooks on an offline client), and how each becomes a ``CairnError``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.stub import Stubber

from cairn.changes import Create, NewRecord
from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    SnapshotConflictError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from cairn.models import EmbedderId, Scope, Source, SourceKind, VersionRef
from cairn.ports import Stores
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.client import translate
from cairn.store.dynamodb.codec import encode_vector, scope_pk, version_sk

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
EMBEDDER = EmbedderId(model_id="faulty", dims=2)
RECORD = NewRecord(
    namespace="/facts/tg:1/", content="Likes tea", sources=(Source(kind=SourceKind.USER),)
)
ITEMS, EVENTS = "cairn-items", "cairn-events"


def offline_client() -> Any:
    """A real client that never reaches AWS: no retries, fake credentials, stubs or hooks."""
    return boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106  # not a secret: nothing is sent
        config=Config(retries={"total_max_attempts": 1}),
    )


def stores_on(client: Any) -> Stores:
    return DynamoDBBackend(client, items_table=ITEMS, events_table=EVENTS).stores()


@pytest.fixture
def stubbed() -> Iterator[tuple[Stubber, Stores]]:
    client = offline_client()
    with Stubber(client) as stubber:
        yield stubber, stores_on(client)
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ProvisionedThroughputExceededException", 400),
        ("ThrottlingException", 400),
        ("RequestLimitExceeded", 400),
        ("TransactionConflictException", 400),
        ("InternalServerError", 500),
    ],
)
@pytest.mark.fault("formation", "throttled", "dynamodb")
def test_throttling_is_a_retryable_store_unavailable_error(
    stubbed: tuple[Stubber, Stores], code: str, status: int
) -> None:
    stubber, stores = stubbed
    stubber.add_client_error("batch_get_item", service_error_code=code, http_status_code=status)

    with pytest.raises(CairnError) as raised:
        stores.records.apply(SCOPE, [Create(record=RECORD)])

    assert type(raised.value) is StoreUnavailableError
    assert raised.value.retryable
    assert isinstance(raised.value.__cause__, ClientError)


def test_a_transaction_cancelled_by_a_concurrent_transaction_is_retryable(
    stubbed: tuple[Stubber, Stores],
) -> None:
    stubber, stores = stubbed
    stubber.add_response("batch_get_item", {"Responses": {ITEMS: []}, "UnprocessedKeys": {}})
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        modeled_fields={"CancellationReasons": [{"Code": "None"}, {"Code": "TransactionConflict"}]},
    )

    with pytest.raises(CairnError) as raised:
        stores.records.apply(SCOPE, [Create(record=RECORD)])

    assert type(raised.value) is StoreUnavailableError
    assert raised.value.retryable


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("ResourceNotFoundException", ConfigurationError),
        ("AccessDeniedException", ConfigurationError),
        ("ValidationException", InvalidInputError),
    ],
)
def test_a_refusal_is_not_retryable(
    stubbed: tuple[Stubber, Stores], code: str, error: type[CairnError]
) -> None:
    stubber, stores = stubbed
    stubber.add_client_error("get_item", service_error_code=code, http_status_code=400)

    with pytest.raises(CairnError) as raised:
        stores.records.get(SCOPE, RECORD.record_id)

    assert type(raised.value) is error
    assert not raised.value.retryable


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (ReadTimeoutError(endpoint_url="https://dynamodb"), StoreTimeoutError),
        (ConnectTimeoutError(endpoint_url="https://dynamodb"), StoreTimeoutError),
        (EndpointConnectionError(endpoint_url="https://dynamodb"), StoreUnavailableError),
    ],
    ids=["read-timeout", "connect-timeout", "unreachable"],
)
@pytest.mark.fault("formation", "timeout", "dynamodb")
def test_timeouts_and_lost_connections_are_retryable(
    fault: Exception, error: type[CairnError]
) -> None:
    client = offline_client()

    def fail(**_: Any) -> None:
        raise fault

    client.meta.events.register("before-send.dynamodb", fail)

    with pytest.raises(CairnError) as raised:
        stores_on(client).journal.get(SCOPE, "j-1")

    assert type(raised.value) is error
    assert raised.value.retryable
    assert raised.value.__cause__ is fault


def test_unprocessed_keys_are_read_again_until_none_are_left(
    stubbed: tuple[Stubber, Stores],
) -> None:
    stubber, stores = stubbed
    refs = [VersionRef(record_id=RECORD.record_id, version=v) for v in (1, 2)]

    def stored(ref: VersionRef, values: tuple[float, float]) -> dict[str, Any]:
        return {
            "sk": {"S": version_sk(ref.record_id, ref.version)},
            "ek": {"S": EMBEDDER.key},
            "vs": {"N": str(ref.version)},
            "vec": {"B": encode_vector(values)},
        }

    def key_of(ref: VersionRef) -> dict[str, Any]:
        return {"pk": {"S": scope_pk(SCOPE)}, "sk": {"S": version_sk(ref.record_id, ref.version)}}

    stubber.add_response(
        "batch_get_item",
        {
            "Responses": {ITEMS: [stored(refs[0], (1.0, 0.0))]},
            "UnprocessedKeys": {ITEMS: {"Keys": [key_of(refs[1])], "ConsistentRead": True}},
        },
    )
    stubber.add_response(
        "batch_get_item",
        {"Responses": {ITEMS: [stored(refs[1], (0.0, 1.0))]}, "UnprocessedKeys": {}},
    )

    found = stores.records.vectors(SCOPE, refs, EMBEDDER)

    assert {ref: list(values) for ref, values in found.items()} == {
        refs[0]: [1.0, 0.0],
        refs[1]: [0.0, 1.0],
    }


def client_error(code: str, status: int = 400, **fields: Any) -> ClientError:
    response = {"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError({**response, **fields}, "TransactWriteItems")


HEAD_PUT = {
    "Put": {
        "Item": {"pk": {"S": scope_pk(SCOPE)}, "sk": {"S": "H#mem-" + "1" * 36}},
        "ExpressionAttributeValues": {":want": {"N": "3"}},
    }
}
EVENT_DELETE = {"Delete": {"Key": {"pk": {"S": "E#m1|tg:1|s1"}, "sk": {"S": "2026#1#ab"}}}}


@pytest.mark.parametrize(
    ("error", "params", "expected"),
    [
        (client_error("ThrottlingException"), {}, StoreUnavailableError),
        (client_error("SomethingNew", 503), {}, StoreUnavailableError),
        (client_error("SomethingNew", 400), {}, ConfigurationError),
        (client_error("ConditionalCheckFailedException"), {}, ConflictError),
        (
            client_error(
                "TransactionCanceledException",
                CancellationReasons=[{"Code": "ConditionalCheckFailed"}],
            ),
            {"TransactItems": [HEAD_PUT]},
            SnapshotConflictError,
        ),
        (
            client_error(
                "TransactionCanceledException",
                CancellationReasons=[{"Code": "ConditionalCheckFailed"}],
            ),
            {"TransactItems": [EVENT_DELETE]},
            ConflictError,
        ),
        (
            client_error(
                "TransactionCanceledException",
                CancellationReasons=[{"Code": "None"}, {"Code": "ValidationError"}],
            ),
            {"TransactItems": [HEAD_PUT, EVENT_DELETE]},
            InvalidInputError,
        ),
    ],
    ids=[
        "throttled",
        "unknown-5xx",
        "unknown-4xx",
        "single-condition",
        "record-condition",
        "other-condition",
        "invalid-item",
    ],
)
def test_each_error_code_maps_to_one_error_class(
    error: ClientError, params: dict[str, Any], expected: type[CairnError]
) -> None:
    translated = translate(error, "transact_write_items", params)

    assert type(translated) is expected


def test_a_failed_head_condition_names_the_record_and_the_version_expected() -> None:
    error = client_error(
        "TransactionCanceledException", CancellationReasons=[{"Code": "ConditionalCheckFailed"}]
    )

    translated = translate(error, "transact_write_items", {"TransactItems": [HEAD_PUT]})

    assert isinstance(translated, SnapshotConflictError)
    assert translated.moved == (("mem-" + "1" * 36, 3, None),)
