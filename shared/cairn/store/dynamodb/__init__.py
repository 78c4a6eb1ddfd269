"""cairn.store.dynamodb: the public names, re-exported from ``cairn.store.dynamodb.backend``."""

from cairn.store.dynamodb.backend import (
    DynamoDBBackend,
    DynamoDBClient,
)

__all__ = [
    "DynamoDBBackend",
    "DynamoDBClient",
]
