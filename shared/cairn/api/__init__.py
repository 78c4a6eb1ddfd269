"""The AgentCore Memory-compatible HTTP API: both planes, one router, two hosts.

``Api(ApiContext.build(stores, embedder=..., clock=...)).handle(ApiRequest(...))`` answers one
raw HTTP request exactly as Amazon Bedrock AgentCore Memory would (paths, methods, status
codes, JSON shapes, epoch-second timestamps, pagination tokens, AWS-shaped errors), so the
boto3 ``bedrock-agentcore`` / ``bedrock-agentcore-control`` clients, the ``bedrock-agentcore``
SDK and Strands' session manager work against cairn unmodified. ``cairn serve`` hosts it on
loopback; ``functions/api/handler.py`` behind API Gateway. What differs from AgentCore is listed
in docs/agentcore-compatibility.md.
"""

from cairn.api.context import ApiContext, ApiSettings
from cairn.api.router import Api, ApiRequest, ApiResponse

__all__ = ["Api", "ApiContext", "ApiRequest", "ApiResponse", "ApiSettings"]
