"""The deployed stack's DynamoDB client and table names, for operator commands.

``cairn restore-actor`` names the live tables by the stack's outputs (``ItemsTableName``,
``EventsTableName``) or directly; the client comes from the default boto3 session, with the
credentials and region the AWS CLI would use. ``botocore`` errors are translated here.
"""

from __future__ import annotations

from typing import Any

from cairn.aws.stack_outputs import stack_outputs
from cairn.errors import ConfigurationError, InvalidInputError

OUTPUTS = ("ItemsTableName", "EventsTableName")


def open_dynamodb(region: str | None) -> tuple[Any, Any]:
    """(a DynamoDB client, a CloudFormation client) from the default session."""
    import boto3  # the aws extra; imported here so the module imports without it

    session = boto3.session.Session(region_name=region)
    return session.client("dynamodb"), session.client("cloudformation")


def live_tables(
    cloudformation: Any, *, stack: str | None, items: str | None, events: str | None
) -> tuple[str, str]:
    """(items table, events table): both given, or read from ``stack``'s outputs."""
    if items is not None and events is not None:
        return items, events
    if stack is None:
        raise InvalidInputError(
            "name the live tables: pass --stack NAME, or both --items-table and --events-table"
        )
    outputs = stack_outputs(cloudformation, stack, otherwise="both table names")
    if any(name not in outputs for name in OUTPUTS):
        raise ConfigurationError(f"stack {stack!r} has no {' / '.join(OUTPUTS)} outputs")
    return outputs[OUTPUTS[0]], outputs[OUTPUTS[1]]
