"""Driving the router directly: signed-looking headers, JSON in and out, a memory to work in."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from cairn.api import Api, ApiContext, ApiRequest, ApiResponse, ApiSettings
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.ports import Stores

SIGNATURE = "0" * 64
HEADERS = {
    "Authorization": (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/bedrock-agentcore/"
        f"aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature={SIGNATURE}"
    ),
    "X-Amz-Date": "20260101T000000Z",
    "Content-Type": "application/json",
}


def segment(value: str) -> str:
    """A URI label as botocore encodes it: every reserved character, ``/`` included."""
    return quote(value, safe="")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def error_type(self) -> str | None:
        return self.headers.get("x-amzn-ErrorType")


def decode(response: ApiResponse) -> Reply:
    return Reply(response.status, response.headers, json.loads(response.body))


@dataclass
class Caller:
    api: Api

    def raw(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        query: str = "",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        request = ApiRequest(method, path, query, HEADERS if headers is None else headers, body)
        return decode(self.api.handle(request))

    def __call__(
        self, method: str, path: str, body: dict[str, Any] | None = None, query: str = ""
    ) -> Reply:
        payload = json.dumps(body).encode() if body is not None else b""
        return self.raw(method, path, payload, query)


def build_api(stores: Stores, clock: FixedClock, settings: ApiSettings | None = None) -> Api:
    context = ApiContext.build(
        stores, embedder=HashingEmbedder(), clock=clock, settings=settings or ApiSettings()
    )
    return Api(context)


def create_memory(call: Caller, name: str = "support", **extra: Any) -> dict[str, Any]:
    body = {
        "name": name,
        "eventExpiryDuration": 30,
        "memoryStrategies": [
            {
                "semanticMemoryStrategy": {
                    "name": "facts",
                    "namespaceTemplates": ["/facts/{actorId}/"],
                }
            }
        ],
        **extra,
    }
    reply = call("POST", "/memories/create", body)
    assert reply.status == 202, reply.body
    memory: dict[str, Any] = reply.body["memory"]
    return memory
