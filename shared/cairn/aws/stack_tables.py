"""The deployed stack's DynamoDB client and table names, for operator commands.

``cairn restore-actor`` names the live tables by the stack's outputs (``ItemsTableName``,
``EventsTableName``) or directly; the client comes from the default boto3 session, with the
credentials and region the AWS CLI would use. ``botocore`` errors are translated here.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cairn.errors import ConfigurationError, InvalidInputError, StoreUnavailableError

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
    try:
        (found,) = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        raise ConfigurationError(
            f"no stack {stack!r} in this account and region (or no permission to describe it); "
            "pass --stack with the deployed stack's name, or both table names"
        ) from exc
    except BotoCoreError as exc:
        raise StoreUnavailableError(
            f"CloudFormation is unreachable ({type(exc).__name__}); retry"
        ) from exc
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    if any(name not in outputs for name in OUTPUTS):
        raise ConfigurationError(f"stack {stack!r} has no {' / '.join(OUTPUTS)} outputs")
    return outputs[OUTPUTS[0]], outputs[OUTPUTS[1]]
