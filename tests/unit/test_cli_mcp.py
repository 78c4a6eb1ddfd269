"""``cairn mcp`` driven by the official MCP SDK's own client over stdio, on a real store."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

pytestmark = [pytest.mark.onnx, pytest.mark.slow]

Steps = Callable[[ClientSession], Awaitable[Any]]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def _drive(store: Path, actor: str, steps: Steps) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cairn", "mcp", "--store", str(store), "--actor", actor],
        env=env,
    )

    async def session() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await steps(client)

    return asyncio.run(session())


def test_an_mcp_client_remembers_recalls_audits_and_forgets(tmp_path: Path) -> None:
    store = tmp_path / "mcp.db"

    async def steps(client: ClientSession) -> dict[str, Any]:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        filed = _text(await client.call_tool("remember", {"text": "Sam drinks green tea"}))
        record_id = filed.split()[1]
        again = _text(await client.call_tool("remember", {"text": "Sam drinks green tea"}))
        found = _text(await client.call_tool("recall", {"query": "green tea"}))
        audit = _text(await client.call_tool("history", {"record_id": record_id}))
        gone = _text(await client.call_tool("forget", {"record_id": record_id, "reason": "old"}))
        after = _text(await client.call_tool("recall", {"query": "green tea"}))
        return {
            "tools": tools,
            "record_id": record_id,
            "filed": filed,
            "again": again,
            "found": found,
            "audit": audit,
            "gone": gone,
            "after": after,
        }

    seen = _drive(store, "sam", steps)
    assert seen["tools"] == ["forget", "history", "recall", "remember"]
    assert seen["filed"] == f"remembered {seen['record_id']} v1 (untrusted)"
    assert seen["again"] == f"remembered {seen['record_id']} v2 (untrusted)"  # folded in
    assert '"Sam drinks green tea"' in seen["found"]  # untrusted entries render quoted
    assert "journal: jrn-" in seen["found"]
    assert "seen 2x" in seen["audit"]
    assert "sources: model" in seen["audit"]
    assert seen["gone"] == f"forgot {seen['record_id']} (now v3, retracted)"
    assert "Sam drinks green tea" not in seen["after"]


def test_the_tools_are_pinned_to_the_actor_the_server_was_started_for(tmp_path: Path) -> None:
    store = tmp_path / "mcp.db"

    async def file(client: ClientSession) -> str:
        return _text(await client.call_tool("remember", {"text": "Sam's door code is 4711"}))

    record_id = _drive(store, "sam", file).split()[1]

    async def pry(client: ClientSession) -> tuple[Any, Any, str]:
        audit = await client.call_tool("history", {"record_id": record_id})
        forget = await client.call_tool("forget", {"record_id": record_id})
        found = _text(await client.call_tool("recall", {"query": "door code"}))
        return audit, forget, found

    audit, forget, found = _drive(store, "eve", pry)
    assert audit.is_error
    assert "does not exist" in _text(audit)
    assert forget.is_error
    assert "does not exist" in _text(forget)
    assert "4711" not in found
    assert "4711" not in _text(audit)


def test_bad_tool_input_is_a_tool_error_the_model_can_read(tmp_path: Path) -> None:
    async def steps(client: ClientSession) -> Any:
        return await client.call_tool("recall", {"query": "tea", "top_k": 500})

    result = _drive(tmp_path / "mcp.db", "sam", steps)
    assert result.is_error
    assert "top_k" in _text(result)
    assert "fix the value" in _text(result)
