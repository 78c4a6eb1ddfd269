"""Strands: a real ``strands.Agent`` with ``CairnMemoryHooks`` and a scripted Strands model.

Each invocation is one cairn run: the block is in the system prompt of every model call of the
invocation and only there, the memory tools answer from that run, the permission gate can
cancel a write, and the turns are recorded in the session.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from strands import Agent
from strands.models import Model

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.models import Conversational, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.runtime import MemorySession
from cairn.runtime.converse import allow_all, deny_writes
from cairn.runtime.strands_memory import CairnMemoryHooks
from cairn.testing import HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-1", actor_id="tg:42")
Step = tuple[str, Any]  # ("text", str) or ("tool", (name, input))


class ScriptedStrandsModel(Model):
    """Streams scripted replies as Bedrock stream events; records each call's system prompt."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.system_prompts: list[str | None] = []
        self.tool_names: list[list[str]] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **_: Any
    ) -> AsyncIterator[dict[str, Any]]:
        self.system_prompts.append(system_prompt)
        self.tool_names.append([spec["name"] for spec in tool_specs or []])
        kind, value = self.steps.pop(0)
        for event in _events(kind, value, len(self.system_prompts)):
            yield event


def _events(kind: str, value: Any, call: int) -> Iterator[dict[str, Any]]:
    yield {"messageStart": {"role": "assistant"}}
    if kind == "text":
        yield {"contentBlockDelta": {"delta": {"text": value}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        return
    name, arguments = value
    yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"t{call}", "name": name}}}}
    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "tool_use"}}


@pytest.fixture
def stores() -> Stores:
    stores = InMemoryBackend(FixedClock()).stores()
    record = NewRecord(
        namespace="/facts/tg:42/",
        content="The user's team deploys on Tuesdays.",
        confidence=0.9,
        sources=(Source(kind=SourceKind.USER),),
    )
    stores.records.apply(SCOPE, [Create(record=record)])
    return stores


def _session(stores: Stores) -> MemorySession:
    return MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=HashingEmbedder(),
    )


def test_each_invocation_is_a_run_with_its_block_fixed_in_the_system_prompt(
    stores: Stores,
) -> None:
    session = _session(stores)
    hooks = CairnMemoryHooks(session, system_prompt="You are a release bot.", gate=allow_all)
    model = ScriptedStrandsModel(
        [
            ("tool", ("learn", {"lesson": "Deploys on Tuesdays need a change ticket."})),
            ("tool", ("memory_recall", {"query": "deploys Tuesdays"})),
            ("text", "Noted."),
            ("text", "Yes: a change ticket."),
        ]
    )
    agent = Agent(model=model, tools=hooks.tools(), hooks=[hooks], callback_handler=None)

    agent("When does my team deploy?")
    first_run = hooks.run
    assert first_run is not None
    assert model.system_prompts[:3] == [first_run.system_prompt("You are a release bot.")] * 3
    assert "The user's team deploys on Tuesdays." in (model.system_prompts[0] or "")
    assert model.tool_names[0] == ["learn", "memory_edit", "memory_recall"]

    agent("Anything I need for a Tuesday deploy?")
    assert hooks.run is not first_run
    assert "Deploys on Tuesdays need a change ticket." in (model.system_prompts[3] or "")
    assert "Deploys on Tuesdays need a change ticket." not in (model.system_prompts[0] or "")

    session.close()
    texts = [
        (p.role.value, p.text)
        for e in stores.events.list_events(SCOPE, "s1").items
        for p in e.payload
        if isinstance(p, Conversational)
    ]
    assert texts == [
        ("USER", "When does my team deploy?"),
        ("ASSISTANT", "Noted."),
        ("USER", "Anything I need for a Tuesday deploy?"),
        ("ASSISTANT", "Yes: a change ticket."),
    ]


def test_the_permission_gate_cancels_a_write_and_nothing_is_written(stores: Stores) -> None:
    hooks = CairnMemoryHooks(_session(stores), system_prompt="Be brief.", gate=deny_writes)
    model = ScriptedStrandsModel(
        [("tool", ("learn", {"lesson": "Never deploy on Fridays."})), ("text", "Okay.")]
    )
    agent = Agent(model=model, tools=hooks.tools(), hooks=[hooks], callback_handler=None)
    agent("Remember: never deploy on Fridays.")
    contents = [v.content for v in stores.records.list_records(SCOPE).items]
    assert contents == ["The user's team deploys on Tuesdays."]
    results = [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]
    assert [r["status"] for r in results] == ["error"]


def test_a_memoryless_session_gives_strands_no_tools_and_the_bare_prompt() -> None:
    hooks = CairnMemoryHooks(MemorySession.memoryless(), system_prompt="Be brief.", gate=allow_all)
    assert hooks.tools() == []
    model = ScriptedStrandsModel([("text", "Hi.")])
    Agent(model=model, tools=hooks.tools(), hooks=[hooks], callback_handler=None)("Hello")
    assert model.system_prompts == ["Be brief."]
    assert model.tool_names == [[]]


def test_strands_tool_specs_carry_the_schema_and_the_permission_hints(stores: Stores) -> None:
    hooks = CairnMemoryHooks(_session(stores), system_prompt="", gate=allow_all)
    specs = {tool.tool_name: tool.tool_spec for tool in hooks.tools()}
    assert (
        specs["memory_recall"]["inputSchema"]["json"]["properties"]["max_results"]["maximum"] == 20
    )
    assert specs["learn"].get("annotations", {})["readOnlyHint"] is False
    assert specs["memory_recall"].get("annotations", {})["readOnlyHint"] is True


def test_a_session_with_a_history_budget_puts_its_boot_window_in_every_call_of_a_run(
    stores: Stores,
) -> None:
    from cairn.history.boot_window import HEADING
    from cairn.runtime import SessionOptions

    session = MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=HashingEmbedder(),
        options=SessionOptions(history_budget_tokens=2000),
    )
    session.add_turn("USER", "Last week we moved the deploy window to Tuesdays.")
    hooks = CairnMemoryHooks(session, system_prompt="You are a release bot.", gate=allow_all)
    model = ScriptedStrandsModel(
        [("tool", ("memory_recall", {"query": "deploy window"})), ("text", "Tuesdays.")]
    )
    agent = Agent(model=model, tools=hooks.tools(), hooks=[hooks], callback_handler=None)

    agent("When is the deploy window?")

    first, second = model.system_prompts
    assert first == second
    assert HEADING in (first or "")
    assert "Last week we moved the deploy window to Tuesdays." in (first or "")
