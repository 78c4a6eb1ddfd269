"""A Bedrock Converse agent loop over a ``MemorySession``: one ``answer`` is one run.

The loop calls anything shaped like ``bedrock_runtime.converse(**request)`` (boto3's client
method, or ``ScriptedConverse`` in tests and the offline demo). Each answer starts a run, so
recall is assembled once and the system prompt is byte-identical for every model call of the
run; tool calls are answered by the run's ``MemoryTools``, after the host's permission gate for
the tools that write durable state, or by the host's own ``sinks``; a write or a sink whose
input carries untrusted recalled memory runs only with the host's ``release``. The user's
message and the final answer are recorded as turns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.errors import ReleaseRequiredError
from cairn.models import Role
from cairn.runtime.release import ReleaseGate, deny_release
from cairn.runtime.run import Run
from cairn.runtime.session import MemorySession
from cairn.runtime.tool_definitions import ToolDefinition, ToolOutcome
from cairn.runtime.tool_formats import converse_tool_result

ConverseFn = Callable[..., Mapping[str, Any]]
Message = dict[str, Any]
PermissionGate = Callable[[ToolDefinition, Mapping[str, Any]], bool]
"""Asked before a tool that writes durable state runs; ``False`` refuses the call."""


def allow_all(definition: ToolDefinition, arguments: Mapping[str, Any]) -> bool:
    """A gate that permits every memory write (for hosts that trust the model with memory)."""
    return True


def deny_writes(definition: ToolDefinition, arguments: Mapping[str, Any]) -> bool:
    """A gate that refuses every tool that writes durable state; recall stays available."""
    return not definition.needs_permission


@dataclass(frozen=True, slots=True)
class HostSink:
    """A host's own tool that reaches the outside world (send a message, call an API): its
    Converse ``toolSpec`` (name, description, inputSchema) and the function that runs it. It
    runs only when its input carries no untrusted recall, or the host's release gate released
    it (``cairn.runtime.release``)."""

    spec: Mapping[str, Any]
    call: Callable[[Mapping[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model made in a run, and what it got back."""

    name: str
    arguments: Mapping[str, Any]
    outcome: ToolOutcome
    permitted: bool


@dataclass(frozen=True, slots=True)
class Answer:
    """A run's result: the final text, the run, its tool calls, and the updated conversation
    (pass ``messages`` back as ``history`` to continue it). ``complete`` is false when the run
    stopped at ``max_steps`` model calls without a final answer."""

    text: str
    run: Run
    tool_calls: tuple[ToolCall, ...]
    messages: list[Message]
    complete: bool = True


@dataclass
class ConverseAgent:
    """An agent loop: Converse model calls and memory tools, on one ``MemorySession``."""

    converse: ConverseFn
    model_id: str
    session: MemorySession
    system_prompt: str
    gate: PermissionGate
    max_steps: int = 8
    inference_config: Mapping[str, Any] | None = None
    # Bedrock prompt caching: a cache point after the run's fixed system prompt.
    cache_point: bool = False
    # Asked when a write or a sink carries untrusted recall (default: never released).
    release: ReleaseGate = deny_release
    # The host's own tools that reach the outside world, by name.
    sinks: Mapping[str, HostSink] = field(default_factory=dict)

    def answer(self, user_text: str, history: Sequence[Message] = ()) -> Answer:
        """Answer ``user_text`` in a new run; the prompt's system part is fixed for the run."""
        run = self.session.start_run(user_text, release=self.release)
        system = self._system(run)
        content: list[dict[str, Any]] = [{"text": user_text}]
        if (injected := run.turn_context(user_text)) is not None:
            content.append({"text": injected})
        messages: list[Message] = [*history, {"role": "user", "content": content}]
        run.add_turn(Role.USER, user_text)
        calls: list[ToolCall] = []
        for _ in range(self.max_steps):
            response = self.converse(**self._request(run, system, messages))
            message: Message = dict(response["output"]["message"])
            messages.append(message)
            uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
            if response.get("stopReason") != "tool_use" or not uses:
                text = "".join(block.get("text", "") for block in message["content"])
                run.add_turn(Role.ASSISTANT, text, tool_calls=[c.name for c in calls])
                run.complete(text)  # stages the run's evidence; never fails the answer
                return Answer(text=text, run=run, tool_calls=tuple(calls), messages=messages)
            results = [self._use(run, use, calls) for use in uses]
            messages.append({"role": "user", "content": results})
        run.complete(None, status="aborted")
        return Answer(text="", run=run, tool_calls=tuple(calls), messages=messages, complete=False)

    def _system(self, run: Run) -> list[dict[str, Any]]:
        system: list[dict[str, Any]] = [{"text": self.system_prompt}]
        if run.block:
            system.append({"text": run.block})
        if run.history_block:
            system.append({"text": run.history_block})
        if self.cache_point:
            system.append({"cachePoint": {"type": "default"}})
        return system

    def _request(
        self, run: Run, system: list[dict[str, Any]], messages: list[Message]
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"modelId": self.model_id, "system": system, "messages": messages}
        tool_config = run.tools.converse_tool_config() or {"tools": []}
        tool_config["tools"] = [
            *tool_config["tools"],
            *({"toolSpec": dict(sink.spec)} for sink in self.sinks.values()),
        ]
        if tool_config["tools"]:
            request["toolConfig"] = tool_config
        if self.inference_config is not None:
            request["inferenceConfig"] = dict(self.inference_config)
        return request

    def _use(self, run: Run, use: Mapping[str, Any], calls: list[ToolCall]) -> dict[str, Any]:
        name = str(use["name"])
        given = use.get("input")
        arguments: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if name in self.sinks:
            outcome, permitted = self._sink(run, name, arguments), True
            calls.append(ToolCall(name, arguments, outcome, permitted))
            return converse_tool_result(str(use["toolUseId"]), outcome)
        definition = run.tools.definition(name)
        permitted = definition is None or not definition.needs_permission
        if definition is not None and definition.needs_permission:
            permitted = self.gate(definition, arguments)
        if permitted:
            outcome = run.tools.call(name, arguments)
        else:
            outcome = ToolOutcome.failed(f"the host did not permit {name} here; go on without it")
        calls.append(ToolCall(name=name, arguments=arguments, outcome=outcome, permitted=permitted))
        return converse_tool_result(str(use["toolUseId"]), outcome)

    def _sink(self, run: Run, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        try:
            run.require_release(name, arguments)
        except ReleaseRequiredError as exc:
            return ToolOutcome.failed(exc.message)
        return ToolOutcome(ok=True, content=dict(self.sinks[name].call(arguments)))
