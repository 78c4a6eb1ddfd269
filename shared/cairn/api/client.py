"""Client side: point an unmodified AgentCore client at cairn through its boto3 Session.

Real AgentCore clients sign every request for the service ``bedrock-agentcore`` (reference §4).
Two situations need one more step than setting the endpoint environment variables:

- cairn behind API Gateway with IAM auth: the gateway accepts only signatures for
  ``execute-api``; ``sign_for_execute_api=True`` re-signs the requests for it.
- ``cairn serve --token``: the token travels in the ``x-cairn-token`` header.

Both are botocore ``before-sign`` hooks on a boto3 Session, registered by ``use_cairn`` before
any client is made from that session::

    session = boto3.Session(region_name="us-east-1")
    use_cairn(session, sign_for_execute_api=True)
    memory = MemoryClient(boto3_session=session)           # bedrock-agentcore SDK
    manager = AgentCoreMemorySessionManager(config, boto_session=session)  # Strands

This module never imports boto3: the session is passed in.
"""

from __future__ import annotations

from typing import Any

from cairn.api.auth import TOKEN_HEADER

SERVICES = ("bedrock-agentcore", "bedrock-agentcore-control")
EXECUTE_API = "execute-api"


def _execute_api_signer(request: Any, **_: Any) -> None:
    # botocore reads the signing name from the request context (botocore.signers).
    request.context.setdefault("signing", {})["signing_name"] = EXECUTE_API


def _token_header(token: str) -> Any:
    def add_token(request: Any, **_: Any) -> None:
        request.headers[TOKEN_HEADER] = token

    return add_token


def use_cairn(session: Any, *, token: str | None = None, sign_for_execute_api: bool = False) -> Any:
    """Register cairn's hooks on ``session`` (a ``boto3.Session``) and return it.

    Clients made from the session afterwards sign for ``execute-api`` when
    ``sign_for_execute_api`` and carry ``token`` in ``x-cairn-token`` when given; clients
    made before the call are unaffected. Calling it again replaces the earlier hooks.
    """
    events = session.events
    for service in SERVICES:
        event = f"before-sign.{service}"
        events.unregister(event, unique_id=f"cairn-signing-{service}")
        events.unregister(event, unique_id=f"cairn-token-{service}")
        if sign_for_execute_api:
            events.register(event, _execute_api_signer, unique_id=f"cairn-signing-{service}")
        if token is not None:
            events.register(event, _token_header(token), unique_id=f"cairn-token-{service}")
    return session
