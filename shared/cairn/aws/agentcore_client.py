"""Calls to a boto3 ``bedrock-agentcore`` client, its botocore errors raised as cairn errors.

The one boundary where the AgentCore client's errors become cairn's (``AgentCoreSessionStore``
makes every call through ``call``). Errors are read from the AWS error code, never from message
text, and always chained. ``MemorySession.agentcore`` imports this module only when a session is
opened over a client: whoever has a client has botocore, and the runtime installs without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ParamValidationError,
    ReadTimeoutError,
)

from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    MemoryNotFoundError,
    RecordNotFoundError,
    StoreTimeoutError,
    StoreUnavailableError,
)

_BUSY = frozenset(
    {
        "ThrottlingException",
        "ServiceQuotaExceededException",
        "InternalServerException",
        "ServiceException",
        "ServiceUnavailableException",
    }
)
_DENIED = frozenset(
    {"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException"}
)


def call(method: Callable[..., Any], /, **params: Any) -> dict[str, Any]:
    """``method(**params)``, its AWS errors raised as cairn errors: the botocore
    ``cairn.runtime.agentcore_wire.Call``."""
    try:
        answer: dict[str, Any] = method(**params)
    except ClientError as exc:
        raise _translated(exc.response.get("Error", {}).get("Code", ""), params) from exc
    except ParamValidationError as exc:
        # The client checks the wire model's limits before sending (e.g. memory ids of 12+
        # characters); its report names the parameter, never its value.
        raise InvalidInputError(
            "the memory API would refuse this request: a parameter is outside the wire "
            "model's limits (e.g. memory ids have 12 or more characters)"
        ) from exc
    except ReadTimeoutError as exc:
        raise StoreTimeoutError("the memory endpoint did not answer in time; retry") from exc
    except (EndpointConnectionError, ConnectionClosedError) as exc:
        raise StoreUnavailableError(
            "the memory endpoint is unreachable; check the endpoint URL and retry"
        ) from exc
    return answer


def _translated(code: str, params: dict[str, Any]) -> CairnError:
    if code == "ResourceNotFoundException":
        if "memoryRecordId" in params:
            return RecordNotFoundError(str(params["memoryRecordId"]))
        return MemoryNotFoundError(str(params.get("memoryId")))
    if code in _BUSY:
        return StoreUnavailableError(f"the memory endpoint is busy ({code}); retry later")
    if code == "ConflictException":
        return ConflictError("the memory changed meanwhile; read it again and retry")
    if code in _DENIED:
        return ConfigurationError(
            f"the memory endpoint refused the credentials ({code}); check the client's "
            "credentials and the endpoint's token"
        )
    return InvalidInputError(f"the memory endpoint refused the request ({code or 'unknown'})")
