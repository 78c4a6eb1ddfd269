"""The outputs of a deployed cairn stack, read from CloudFormation for operator commands.

``botocore`` errors are translated here: a stack that is not there (or may not be described)
is a ``ConfigurationError`` saying what to pass instead, an unreachable service is retryable.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cairn.errors import ConfigurationError, StoreUnavailableError


def stack_outputs(cloudformation: Any, stack: str, *, otherwise: str) -> dict[str, str]:
    """``stack``'s outputs by key; ``otherwise`` ends the error when there is no such stack
    (what to pass instead of ``--stack``)."""
    try:
        (found,) = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        raise ConfigurationError(
            f"no stack {stack!r} in this account and region (or no permission to describe it); "
            f"pass --stack with the deployed stack's name, or {otherwise}"
        ) from exc
    except BotoCoreError as exc:
        raise StoreUnavailableError(
            f"CloudFormation is unreachable ({type(exc).__name__}); retry"
        ) from exc
    return {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
