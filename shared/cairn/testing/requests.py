"""Counting the AWS requests a boto3 client sends, for tests and benchmarks.

``RequestLog`` registers on botocore's own event hooks of an injected client, so every API call
is counted on the wire (moto or real AWS alike) without wrapping or mocking the client.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any


class RequestLog:
    """Every operation the client sends, in order, and the size of each DynamoDB transaction."""

    def __init__(self, client: Any, service: str = "dynamodb") -> None:
        self.operations: list[str] = []
        self.transaction_sizes: list[int] = []
        client.meta.events.register(f"before-call.{service}", self._record)
        client.meta.events.register(
            f"before-parameter-build.{service}.TransactWriteItems", self._record_transaction
        )

    def _record(self, model: Any, **_: Any) -> None:
        self.operations.append(model.name)

    def _record_transaction(self, params: dict[str, Any], **_: Any) -> None:
        self.transaction_sizes.append(len(params["TransactItems"]))

    def during(self, action: Callable[[], object]) -> list[str]:
        """The operations sent while ``action`` ran, in order."""
        start = len(self.operations)
        action()
        return self.operations[start:]

    def counted(self, action: Callable[[], object]) -> Counter[str]:
        """How many of each operation ``action`` sent."""
        return Counter(self.during(action))
