"""The injected boto3 DynamoDB client behind one choke point: every request, every error.

``DynamoDBClient.call`` is the only place a request is sent, and ``translate`` the only place
a botocore error becomes a ``CairnError`` (by error code, never by message, always
``raise ... from exc``). Throttling, transaction conflicts and timeouts become retryable
``StoreUnavailableError`` / ``StoreTimeoutError``; a failed condition inside a transaction
becomes ``SnapshotConflictError`` naming the records whose condition failed.

The client is typed ``Any``: botocore ships no type information and cairn adds no stub
package for it (pyproject.toml tells mypy so). Request and response shapes are the low-level,
typed-value ones (``{"S": ...}``): https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,  # botocore's, not the builtin
    ConnectTimeoutError,
    HTTPClientError,
    ReadTimeoutError,
)

from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    SnapshotConflictError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from cairn.store.dynamodb.codec import Item, record_id_of, version_of
from cairn.store.dynamodb.commit_proof import answer_lost, committed

_RETRYABLE = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionConflictException",
        "TransactionInProgressException",
        "InternalServerError",
        "ServiceUnavailable",
        # codes inside TransactionCanceledException's CancellationReasons
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
    }
)
_MISCONFIGURED = frozenset(
    {
        "ResourceNotFoundException",
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "MissingAuthenticationTokenException",
        "ExpiredTokenException",
    }
)
_INVALID = frozenset(
    {
        "ValidationException",
        "ItemCollectionSizeLimitExceededException",
        # codes inside TransactionCanceledException's CancellationReasons
        "ValidationError",
        "ItemCollectionSizeLimitExceeded",
    }
)
_CONDITION_FAILED = "ConditionalCheckFailed"

BATCH_GET_KEYS = 100
BATCH_WRITE_ITEMS = 25
_UNPROCESSED_ATTEMPTS = 8
_RESEND_ATTEMPTS = 3  # after a lost answer: resends (each first reads the proof item)


def translate(exc: Exception, operation: str, params: Mapping[str, Any]) -> CairnError:
    """The ``CairnError`` for a botocore error raised by ``operation`` with ``params``."""
    if isinstance(exc, ReadTimeoutError | ConnectTimeoutError):
        return StoreTimeoutError(f"DynamoDB did not answer {operation} in time; try again")
    if isinstance(exc, ConnectionError | HTTPClientError):
        return StoreUnavailableError(f"DynamoDB is unreachable ({operation}); try again later")
    if not isinstance(exc, ClientError):
        return ConfigurationError(
            f"the DynamoDB client cannot send {operation} ({type(exc).__name__}); check its "
            "credentials, region and botocore version"
        )
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code == "TransactionCanceledException":
        return _cancelled(exc.response.get("CancellationReasons") or [], operation, params)
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400))
    return _by_code(code, operation, status)


def _by_code(code: str, operation: str, status: int) -> CairnError:
    if code in _RETRYABLE:
        return StoreUnavailableError(f"DynamoDB is busy ({code} on {operation}); try again")
    if code in _MISCONFIGURED:
        return ConfigurationError(
            f"DynamoDB refused {operation} with {code}: check that the tables exist (see "
            "cairn.store.dynamodb.schema) and that the caller may use them"
        )
    if code in _INVALID:
        return InvalidInputError(
            f"DynamoDB refused {operation} as invalid ({code}) and wrote nothing; an item or "
            "transaction is probably over DynamoDB's size limits: make the record or event smaller"
        )
    if code == "ConditionalCheckFailedException":
        return ConflictError(f"the item changed during {operation}; read it again and retry")
    if status >= 500:
        return StoreUnavailableError(f"DynamoDB failed {operation} ({code}); try again")
    return ConfigurationError(f"DynamoDB refused {operation} with {code}; nothing was written")


def _cancelled(
    reasons: Sequence[Mapping[str, Any]], operation: str, params: Mapping[str, Any]
) -> CairnError:
    codes = [str(reason.get("Code", "None")) for reason in reasons]
    if _CONDITION_FAILED in codes:
        requested = params.get("TransactItems", [])
        failed = [r for r, c in zip(requested, codes, strict=False) if c == _CONDITION_FAILED]
        moved = _moved_records(failed)
        if moved:
            return SnapshotConflictError(moved)
        return ConflictError(f"an item changed during {operation}; nothing was written, retry")
    for code in codes:
        if code in _RETRYABLE:
            return StoreUnavailableError(f"DynamoDB is busy ({code} in {operation}); try again")
    known = [c for c in codes if c != "None"]
    return _by_code(known[0] if known else "ValidationError", operation, 400)


def _moved_records(failed: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, int | None]]:
    """(record id, expected head, None) for each record whose condition failed.

    ``expected`` is the head version the write was conditioned on (0: the record was expected
    not to exist yet); the caller re-reads the heads to fill in what is there now.
    """
    moved: dict[str, int] = {}
    for entry in failed:
        ((_, request),) = entry.items()
        sort_key = str((request.get("Key") or request["Item"])["sk"]["S"])
        rid = record_id_of(sort_key)
        if rid is None:
            continue
        version = version_of(sort_key)
        if version is not None:  # a version Put: it expected the head just below it
            moved.setdefault(rid, version - 1)
            continue
        want = request.get("ExpressionAttributeValues", {}).get(":want")
        moved[rid] = int(want["N"]) if want else 0  # a head's own condition says it best
    return [(rid, want, None) for rid, want in moved.items()]


class DynamoDBClient:
    """An injected low-level boto3 DynamoDB client, every call translated by ``translate``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def call(self, operation: str, **params: Any) -> dict[str, Any]:
        """Send one request (``operation`` is the boto3 method name, e.g. ``get_item``)."""
        try:
            response: dict[str, Any] = getattr(self._client, operation)(**params)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, operation, params) from exc
        return response

    def query(self, **params: Any) -> Iterator[Item]:
        """Items of a Query, page after page, fetched only as far as they are consumed."""
        while True:
            page = self.call("query", **params)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            params = {**params, "ExclusiveStartKey": page["LastEvaluatedKey"]}

    def transact(self, items: Sequence[Item]) -> None:
        """One TransactWriteItems, committed exactly once or not at all, even if its answer
        is lost (``commit_proof``): the same request is sent again with the same token, and
        where that fails its own conditions, the proof item says whether it had committed."""
        requested = list(items)
        params = {"TransactItems": requested, "ClientRequestToken": _token()}
        self._exactly_once("transact_write_items", params, requested)

    def put(self, **params: Any) -> None:
        """One conditional PutItem, written exactly once even if its answer is lost (as
        ``transact``)."""
        self._exactly_once("put_item", params, [{"Put": params}])

    def _exactly_once(self, operation: str, params: dict[str, Any], proof: list[Item]) -> None:
        try:
            self.call(operation, **params)
            return
        except StoreUnavailableError as exc:
            if not answer_lost(exc):
                raise
            lost: StoreUnavailableError = exc
        for attempt in range(_RESEND_ATTEMPTS):
            _back_off(attempt + 1)
            try:
                if committed(proof, self._read):
                    return
                self.call(operation, **params)
                return
            except ConflictError:  # our own commit fails our conditions: a store without tokens
                if committed(proof, self._read):
                    return
                raise
            except StoreUnavailableError as exc:
                lost = exc
        raise lost

    def _read(self, table: str, item_key: Item) -> Item | None:
        found: Item | None = self.call(
            "get_item", TableName=table, Key=item_key, ConsistentRead=True
        ).get("Item")
        return found

    def batch_get(
        self, table: str, keys: Sequence[Item], *, projection: str, names: dict[str, str]
    ) -> list[Item]:
        """Every found item among ``keys``, strongly consistent, 100 keys a request."""
        found: list[Item] = []
        for start in range(0, len(keys), BATCH_GET_KEYS):
            request = {
                table: {
                    "Keys": list(keys[start : start + BATCH_GET_KEYS]),
                    "ConsistentRead": True,
                    "ProjectionExpression": projection,
                    "ExpressionAttributeNames": names,
                }
            }
            for attempt in range(_UNPROCESSED_ATTEMPTS):
                _back_off(attempt)
                response = self.call("batch_get_item", RequestItems=request)
                found.extend(response.get("Responses", {}).get(table, []))
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
            else:
                raise StoreUnavailableError("DynamoDB kept keys unprocessed; try again later")
        return found

    def batch_delete(self, table: str, keys: Sequence[Item]) -> None:
        """Delete every key, 25 a request, retrying what DynamoDB leaves unprocessed."""
        for start in range(0, len(keys), BATCH_WRITE_ITEMS):
            chunk = keys[start : start + BATCH_WRITE_ITEMS]
            request: dict[str, Any] = {table: [{"DeleteRequest": {"Key": k}} for k in chunk]}
            for attempt in range(_UNPROCESSED_ATTEMPTS):
                _back_off(attempt)
                request = (
                    self.call("batch_write_item", RequestItems=request).get("UnprocessedItems")
                    or {}
                )
                if not request:
                    break
            else:
                raise StoreUnavailableError("DynamoDB kept deletes unprocessed; try again later")


def _back_off(attempt: int) -> None:
    """No wait before the first two attempts, then 50 ms doubling (unprocessed = throttled)."""
    if attempt > 1:
        time.sleep(min(0.05 * 2 ** (attempt - 2), 1.0))


def _token() -> str:
    return uuid.uuid4().hex
