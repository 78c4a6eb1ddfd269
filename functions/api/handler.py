"""The API Lambda: an API Gateway proxy event -> the cairn.api router -> a proxy response.

Deploy behind an HTTP API (payload format 2.0) with a greedy ``{proxy+}`` route and IAM auth,
so the raw path (percent-encoded actor ids) reaches the router; see cairn.api.apigateway.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cairn.api import Api
from cairn.api.apigateway import handle_proxy_event


@cache
def api() -> Api:
    """The router over the deployment's stores, built once per warm container."""
    from functions._common.wiring import build_api  # the composition root (lands with the stack)

    built: Api = build_api()
    return built


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_proxy_event(api(), event)
