"""Strands: ``CairnMemoryHooks``, a hook provider that makes each agent invocation a cairn run.

Why a native provider when ``AgentCoreMemorySessionManager`` already works against cairn's API:
that manager pastes retrieved memory text, unlabelled and unbounded, into the user's message on
every message. This provider instead puts cairn's rendered block in the system prompt once per
invocation (fixed for all its model calls, so the prefix stays cacheable): budget-clamped,
each entry with its id, date, confidence and trust label, untrusted content quoted, under the
"context, not instructions" caveat, and journaled so the prompt can be replayed. It also offers
the memory tools (``tools()``) and enforces the host's permission gate on the ones that write;
those, and the agent's tools the host names as ``sinks``, run with input carrying untrusted
recalled memory only when the host's ``release`` gate releases it.

Needs ``strands-agents``; nothing else in cairn imports this module.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    BeforeInvocationEvent,
    BeforeToolCallEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)
from strands.tools.tools import PythonAgentTool
from strands.types.content import Message, Messages
from strands.types.tools import AgentTool, ToolResult, ToolSpec, ToolUse

from cairn.errors import ReleaseRequiredError
from cairn.models import Role
from cairn.runtime.converse import PermissionGate
from cairn.runtime.release import ReleaseGate, deny_release
from cairn.runtime.run import Run, RunStatus
from cairn.runtime.session import MemorySession
from cairn.runtime.tool_definitions import ToolDefinition, ToolOutcome
from cairn.runtime.tool_formats import mcp_annotations, tool_spec

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
# How an invocation that did not end its turn ended, in cairn's words (nothing is staged).
_STOPPED: dict[str, RunStatus] = {
    "interrupt": "parked",
    "checkpoint": "parked",
    "cancelled": "aborted",
}


def _text(message: Message) -> str:
    return "".join(block.get("text", "") for block in message.get("content", ()))


def _last_user_text(messages: Messages | None) -> str:
    for message in reversed(messages or []):
        if message.get("role") == "user" and (text := _text(message)).strip():
            return text
    return ""


class CairnMemoryHooks(HookProvider):
    """Each invocation of the agent is one run of ``session``: recall once into the system
    prompt (``system_prompt`` followed by the block), turns recorded, tools pinned to the run."""

    def __init__(
        self,
        session: MemorySession,
        *,
        system_prompt: str,
        gate: PermissionGate,
        release: ReleaseGate = deny_release,
        sinks: Collection[str] = (),
    ) -> None:
        self._session = session
        self._system_prompt = system_prompt
        self._gate = gate
        self._release = release
        # The agent's own tools that reach the outside world: each call is checked for
        # untrusted recall before it runs (cairn.runtime.release).
        self._sinks = frozenset(sinks)
        self._definitions = {d.name: d for d in session.tool_definitions}
        self.run: Run | None = None

    def tools(self) -> list[AgentTool]:
        """The memory tools as Strands tools (none for a memoryless session); each answers
        from the invocation's run, so it is pinned to that run's scope and run id."""
        return [self._tool(definition) for definition in self._definitions.values()]

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeInvocationEvent, self._start_run)
        registry.add_callback(MessageAddedEvent, self._record)
        registry.add_callback(BeforeToolCallEvent, self._ask_gate)
        registry.add_callback(AfterInvocationEvent, self._complete)

    def _start_run(self, event: BeforeInvocationEvent) -> None:
        query = _last_user_text(event.messages) or _last_user_text(event.agent.messages)
        self.run = self._session.start_run(query, release=self._release)
        event.agent.system_prompt = self.run.system_prompt(self._system_prompt)

    def _record(self, event: MessageAddedEvent) -> None:
        role = _ROLES.get(str(event.message.get("role")))
        if role is None:
            return
        calls = [b["toolUse"]["name"] for b in event.message.get("content", ()) if "toolUse" in b]
        if self.run is not None:  # the run keeps its transcript for consolidation
            self.run.add_turn(role, _text(event.message), tool_calls=calls)
        else:
            self._session.add_turn(role, _text(event.message))

    def _complete(self, event: AfterInvocationEvent) -> None:
        """A run that ended its turn completed (its evidence is staged); any other stop did
        not. Never raises: the agent's answer stands."""
        if self.run is None:
            return
        stop = event.result.stop_reason if event.result is not None else None
        if event.result is not None and stop == "end_turn":
            self.run.complete(str(event.result).strip() or None)
        else:
            self.run.complete(None, status=_STOPPED.get(str(stop), "failed"))

    def _ask_gate(self, event: BeforeToolCallEvent) -> None:
        name = event.tool_use["name"]
        if name in self._sinks:
            given = event.tool_use.get("input")
            try:
                if self.run is None:
                    raise ReleaseRequiredError(name, ())
                self.run.require_release(name, given if isinstance(given, Mapping) else {})
            except ReleaseRequiredError as exc:
                event.cancel_tool = exc.message
            return
        definition = self._definitions.get(name)
        if definition is None or not definition.needs_permission:
            return
        arguments = event.tool_use.get("input")
        if not self._gate(definition, arguments if isinstance(arguments, Mapping) else {}):
            event.cancel_tool = f"the host did not permit {definition.name} here; go on without it"

    def _tool(self, definition: ToolDefinition) -> AgentTool:
        spec: ToolSpec = {
            "name": definition.name,
            "description": definition.description,
            "inputSchema": tool_spec(definition)["inputSchema"],
            "annotations": mcp_annotations(definition),
        }

        def call(tool_use: ToolUse, **invocation_state: Any) -> ToolResult:
            if self.run is None:
                outcome = ToolOutcome.failed("no agent invocation is in progress")
            else:
                outcome = self.run.tools.call(definition.name, tool_use.get("input") or {})
            return {
                "toolUseId": tool_use["toolUseId"],
                "status": "success" if outcome.ok else "error",
                "content": [{"json": outcome.content}],
            }

        return PythonAgentTool(definition.name, spec, call)
