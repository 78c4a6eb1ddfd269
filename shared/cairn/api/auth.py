"""Who may call: well-formed SigV4, plus an optional shared token. Not an authentication boundary.

AgentCore clients always sign with AWS Signature Version 4 (service ``bedrock-agentcore``,
reference §4). cairn cannot verify a signature without the caller's secret key, so it checks
only that the ``Authorization`` header is a well-formed SigV4 header (credential scope,
signed headers including ``host``, a 64-hex signature, a matching ``X-Amz-Date``) and refuses
anything else the way AWS does. Any credentials pass: **this is not authentication**. Behind
API Gateway, IAM authorises the request before it gets here; on a laptop, ``cairn serve``
listens on loopback.

A shared token makes ``cairn serve`` refuse callers that lack it. Real clients keep their SigV4
``Authorization`` header, so they send the token in ``x-cairn-token`` (``cairn.api.client``
adds it); other callers may send ``Authorization: Bearer <token>`` instead of a signature.

With a principals document (``cairn.api.principals``) each token names one principal instead,
and ``identify`` answers which; behind API Gateway the caller's IAM ARN names it.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping

from cairn.api.errors import ApiError
from cairn.api.principals import Principal, Principals

TOKEN_HEADER = "x-cairn-token"  # noqa: S105  # a header name, not a secret

_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<credential>[^,\s]+),\s*"
    r"SignedHeaders=(?P<signed>[^,\s]+),\s*Signature=(?P<signature>[0-9a-f]{64})"
)
_CREDENTIAL = re.compile(
    r"(?P<key>[A-Za-z0-9]{1,128})/(?P<date>\d{8})/(?P<region>[a-z0-9-]{1,64})/"
    r"(?P<service>[a-z0-9-]{1,64})/aws4_request"
)
_SIGNED_HEADERS = re.compile(r"[a-z0-9-]+(;[a-z0-9-]+)*")
_AMZ_DATE = re.compile(r"(?P<date>\d{8})T\d{6}Z")


def _check_sigv4(authorization: str, amz_date: str | None) -> None:
    """Refuse an ``Authorization`` header that is not well-formed SigV4."""
    found = _SIGV4.fullmatch(authorization)
    credential = _CREDENTIAL.fullmatch(found["credential"]) if found else None
    if found is None or credential is None or not _SIGNED_HEADERS.fullmatch(found["signed"]):
        raise ApiError.access_denied(
            "the Authorization header is not a well-formed AWS Signature Version 4 header; "
            "sign requests with an AWS SDK (any credentials will do)",
            "IncompleteSignatureException",
        )
    if "host" not in found["signed"].split(";"):
        raise ApiError.access_denied(
            "the SigV4 signature must cover the host header", "IncompleteSignatureException"
        )
    stamp = _AMZ_DATE.fullmatch(amz_date or "")
    if stamp is None or stamp["date"] != credential["date"]:
        raise ApiError.access_denied(
            "the X-Amz-Date header is missing or does not match the credential scope's date",
            "IncompleteSignatureException",
        )


def _offered(headers: Mapping[str, str]) -> tuple[str | None, str]:
    """The token a request offers (``x-cairn-token``, else ``Authorization: Bearer``) and the
    ``Authorization`` header left to check as SigV4 (empty when it carried the token)."""
    authorization = headers.get("authorization", "").strip()
    offered = headers.get(TOKEN_HEADER)
    if authorization.startswith("Bearer "):
        offered = offered or authorization.removeprefix("Bearer ").strip()
        authorization = ""
    return offered, authorization


def _check_signature(authorization: str, headers: Mapping[str, str]) -> None:
    if not authorization:
        raise ApiError.access_denied(
            "the request is not signed: send it through an AWS SDK (AWS Signature Version 4; "
            "any credentials will do)",
            "MissingAuthenticationTokenException",
        )
    _check_sigv4(authorization, headers.get("x-amz-date"))


def authorize(headers: Mapping[str, str], token: str | None) -> None:
    """Let the request in or raise an AWS-shaped 403; ``headers`` have lower-case names."""
    if token is None:
        _check_signature(headers.get("authorization", "").strip(), headers)
        return
    offered, authorization = _offered(headers)
    if offered is None or not hmac.compare_digest(offered.encode(), token.encode()):
        raise ApiError.access_denied(
            "this cairn server requires its token: send it in the x-cairn-token header "
            "(cairn.api.client.use_cairn(session, token=...)) or as Authorization: Bearer"
        )
    if authorization:
        _check_sigv4(authorization, headers.get("x-amz-date"))


def identify(
    headers: Mapping[str, str], principals: Principals, caller_arn: str | None
) -> Principal:
    """The principal a request comes from, or an AWS-shaped 403 that says nothing else.

    Where the host names the caller (the API Lambda: the IAM ARN API Gateway authenticated),
    that ARN decides; otherwise (``cairn serve``) the token the request carries does.
    """
    if caller_arn is not None:
        found = principals.for_arn(caller_arn)
        if found is None:
            raise ApiError.access_denied(
                f"the caller {caller_arn} is no principal of this cairn deployment; add it to "
                "the principals document"
            )
        return found
    offered, authorization = _offered(headers)
    principal = principals.for_token(offered) if offered else None
    if principal is None:
        raise ApiError.access_denied(
            "this cairn server admits only its principals: send a principal's token in the "
            "x-cairn-token header (cairn.api.client.use_cairn(session, token=...)) or as "
            "Authorization: Bearer"
        )
    if authorization:
        _check_sigv4(authorization, headers.get("x-amz-date"))
    return principal
