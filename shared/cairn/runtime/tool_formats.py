"""The memory tools in the shapes hosts use: Bedrock Converse, OpenAI, MCP hints.

Every schema is generated from the tool's pydantic input model, then made plain: no ``title``
keys, and an optional field is its one non-null type (leaving it out means "not given"). The
Strands form lives in ``cairn.runtime.strands_memory`` so that only hosts that use Strands
import it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cairn.runtime.tool_definitions import ToolDefinition, ToolOutcome

_NULL = {"type": "null"}


def _plain(node: Any, *, in_properties: bool = False) -> Any:
    """``node`` without titles, each ``anyOf: [X, null]`` (default null) folded into ``X``."""
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned = {
        key: _plain(value, in_properties=key == "properties" and not in_properties)
        for key, value in node.items()
        # Inside "properties" a key is a field name (a field may be called "title").
        if in_properties or key != "title"
    }
    options = cleaned.get("anyOf")
    if isinstance(options, list) and _NULL in options:
        kept = [option for option in options if option != _NULL]
        if len(kept) == 1:
            cleaned.pop("anyOf")
            if cleaned.get("default", 0) is None:
                cleaned.pop("default")
            cleaned = {**kept[0], **cleaned}
    return cleaned


def input_schema(definition: ToolDefinition) -> dict[str, Any]:
    """The JSON schema of the tool's input: an object, unknown properties refused."""
    schema: dict[str, Any] = _plain(definition.input_model.model_json_schema())
    return schema


def tool_spec(definition: ToolDefinition) -> dict[str, Any]:
    """The Converse ``toolSpec`` (also Strands' ``ToolSpec``): name, description, schema."""
    return {
        "name": definition.name,
        "description": definition.description,
        "inputSchema": {"json": input_schema(definition)},
    }


def converse_tool_config(definitions: Sequence[ToolDefinition]) -> dict[str, Any] | None:
    """Converse ``toolConfig`` offering ``definitions``, or ``None`` when there are none
    (Converse refuses an empty tool list, so leave ``toolConfig`` out)."""
    if not definitions:
        return None
    return {"tools": [{"toolSpec": tool_spec(d)} for d in definitions]}


def openai_tools(definitions: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The OpenAI Chat Completions ``tools`` list (``type: function``)."""
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description,
                "parameters": input_schema(d),
            },
        }
        for d in definitions
    ]


def mcp_annotations(definition: ToolDefinition) -> dict[str, object]:
    """MCP tool annotations, which permission layers read: every memory tool is closed-world;
    only ``memory_recall`` is read-only."""
    return {
        "readOnlyHint": not definition.needs_permission,
        "destructiveHint": definition.destructive,
        "idempotentHint": False,
        "openWorldHint": False,
    }


def converse_tool_result(tool_use_id: str, outcome: ToolOutcome) -> dict[str, Any]:
    """A Converse ``toolResult`` content block answering ``tool_use_id``."""
    return {
        "toolResult": {
            "toolUseId": tool_use_id,
            "content": [{"json": outcome.content}],
            "status": "success" if outcome.ok else "error",
        }
    }


def openai_tool_message(tool_call_id: str, outcome: ToolOutcome) -> dict[str, Any]:
    """An OpenAI ``role: tool`` message answering ``tool_call_id``."""
    return {
        "role": "tool",
        "tool_call_id": tool_call_id,
        "content": json.dumps(outcome.content, ensure_ascii=False),
    }
