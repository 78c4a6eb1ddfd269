"""A pytest plugin for the SDK's integration tests: a Strands model that echoes; async tests.

The SDK's memory tests build ``strands.Agent`` with its default model (Bedrock) or with
``strands.models.BedrockModel``; offline, both become ``EchoModel``, which answers every turn
with the text of each user message it was given, oldest first. A test that asks "What is my
name?" therefore passes exactly when the session manager restored the earlier turn ("my name
is John") into the agent's history, which is what it checks; the model adds nothing of its own.

The SDK runs its async tests under pytest-asyncio's auto mode; this plugin runs a coroutine
test in a fresh event loop instead, so the run needs no plugin beyond this one.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

import pytest
from strands.models.model import Model

MARKERS = (
    "integration: a test that reaches the service (here: cairn serve)",
    "order(n): the SDK orders its tests by pytest-order; file order is the same",
    "flaky(reruns, reruns_delay): the SDK reruns these; here each runs once",
)


def echoed(messages: Any) -> str:
    """The text of every user message, oldest first, one per line."""
    lines = [
        block["text"]
        for message in messages
        if message.get("role") == "user"
        for block in message.get("content", [])
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return "\n".join(lines) or "(nothing to echo)"


class EchoModel(Model):
    """Answers each turn with ``echoed(messages)``; accepts and keeps any configuration."""

    def __init__(self, *_: Any, **config: Any) -> None:
        self._config = dict(config)

    def update_config(self, **model_config: Any) -> None:
        self._config.update(model_config)

    def get_config(self) -> Any:
        return self._config

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError("the echo model gives no structured output")
        yield {}  # pragma: no cover  # makes this an async generator

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[Any]:
        text = echoed(messages)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                "metrics": {"latencyMs": 0},
            }
        }


def pytest_configure(config: pytest.Config) -> None:
    """Swap the Bedrock model for the echo model before the SDK's test modules import it."""
    import strands.agent.agent
    import strands.models

    strands.models.BedrockModel = EchoModel  # type: ignore[misc,assignment]
    strands.agent.agent.BedrockModel = EchoModel  # type: ignore[misc,assignment]
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a coroutine test to completion in its own event loop."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True
