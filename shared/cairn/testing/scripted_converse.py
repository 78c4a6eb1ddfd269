"""``ScriptedConverse``: a Converse-shaped fake model for tests and the offline demo.

It answers each ``converse(**request)`` call with the next reply of its script and keeps a deep
copy of every request, so a test can assert what the model was shown (the system prompt of each
call of a run, the tool results). A reply is a Converse response, or a function of the request
that returns one (to act on what a tool returned). It never calls a model.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Response = dict[str, Any]
Reply = Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]


class ScriptExhaustedError(Exception):
    """The model was called more times than its script has replies."""


def say(text: str) -> Response:
    """A final answer (``stopReason: end_turn``)."""
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
    }


def use_tool(name: str, arguments: Mapping[str, Any], *, text: str | None = None) -> Response:
    """A request to call tool ``name`` (``stopReason: tool_use``), with optional text first."""
    content: list[dict[str, Any]] = [{"text": text}] if text else []
    tool_use_id = f"tooluse_{secrets.token_hex(8)}"
    content.append({"toolUse": {"toolUseId": tool_use_id, "name": name, "input": dict(arguments)}})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use",
    }


def system_text(request: Mapping[str, Any]) -> str:
    """Every text block of the request's system prompt, joined by blank lines."""
    return "\n\n".join(block["text"] for block in request.get("system", ()) if "text" in block)


def last_tool_results(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON contents of the tool results in the request's last message."""
    last = request["messages"][-1]
    return [
        item["json"]
        for block in last["content"]
        if "toolResult" in block
        for item in block["toolResult"]["content"]
        if "json" in item
    ]


class ScriptedConverse:
    """Replies from a script, in order; ``requests`` holds a copy of every call made."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return len(self._replies)

    def extend(self, replies: Iterable[Reply]) -> None:
        """Add replies to the end of the script."""
        self._replies.extend(replies)

    def __call__(self, **request: Any) -> Response:
        self.requests.append(copy.deepcopy(request))
        if not self._replies:
            raise ScriptExhaustedError(
                f"the script has no reply left for model call {len(self.requests)}; "
                "add replies for every call the run makes"
            )
        reply = self._replies.pop(0)
        answer = reply(request) if callable(reply) else reply
        return copy.deepcopy(dict(answer))
