"""Whether a write whose answer was lost committed: the proof item of a transaction.

A timeout, a dropped connection or a 5xx after DynamoDB received a write leaves its outcome
unknown: it may have committed. Sending it again is safe with the same ClientRequestToken
(DynamoDB answers a committed transaction as a success for ten minutes), but a store that does
not keep tokens (moto), or a resend after the ten minutes, fails the write's own conditions and
would tell the caller "nothing was written, retry" -- and the caller's retry writes it twice
(issue 14, item 1). So after a lost answer the client reads back the transaction's proof:

- the first Put conditioned on ``attribute_not_exists(pk)`` (the item the write creates: an
  event, a record version, a claim), else the first Put: committed iff the item reads back
  exactly as written (a strongly consistent GetItem);
- a transaction of Deletes only: committed iff every deleted item is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError, HTTPClientError

from cairn.store.dynamodb.codec import Item

_CREATES = "attribute_not_exists(pk)"

Reader = Callable[[str, Item], Item | None]
"""A strongly consistent GetItem: (table, key) -> the item, or None."""


def answer_lost(exc: BaseException) -> bool:
    """Whether the botocore error behind ``exc`` leaves it unknown if the write committed: a
    read timeout or a connection closed mid-answer (``HTTPClientError``), or a 5xx. A request
    that never connected (botocore's ``ConnectionError``) or was refused did not commit."""
    cause = exc.__cause__
    if isinstance(cause, HTTPClientError):
        return True
    if isinstance(cause, ClientError):
        status = int(cause.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400))
        return status >= 500
    return False


def committed(items: Sequence[Mapping[str, Any]], read: Reader) -> bool:
    """Whether the transaction of ``items`` is in the table (see the module docstring)."""
    puts = [entry["Put"] for entry in items if "Put" in entry]
    if puts:
        creating = [put for put in puts if put.get("ConditionExpression", "").startswith(_CREATES)]
        proof = (creating or puts)[0]
        found = read(proof["TableName"], {"pk": proof["Item"]["pk"], "sk": proof["Item"]["sk"]})
        return found is not None and _plain(found) == _plain(proof["Item"])
    deletes = [entry["Delete"] for entry in items if "Delete" in entry]
    return bool(deletes) and all(read(d["TableName"], d["Key"]) is None for d in deletes)


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    """The item with number spellings and set orders normalised, so equal items compare equal
    (DynamoDB may answer ``"1.0"`` as ``"1"`` and a set in another order)."""
    return {name: _value(value) for name, value in item.items()}


def _value(typed: Mapping[str, Any]) -> Any:
    ((kind, value),) = typed.items()
    if kind == "N":
        return ("N", Decimal(value))
    if kind == "NS":
        return ("NS", frozenset(Decimal(v) for v in value))
    if kind in ("SS", "BS"):
        return (kind, frozenset(value))
    if kind == "M":
        return ("M", _plain(value))
    if kind == "L":
        return ("L", [_value(v) for v in value])
    return (kind, value)
