"""``cairn demo-agent``: an agent loop with memory tools, across separate processes.

The parent prints headings and runs three children on the embedded demo store:
``demo-agent-phase learn`` (run 1 files a lesson with ``learn``), ``demo-agent-phase
recall-and-edit`` (a new process: run 2 is assembled with the lesson in its recall block, run 3
rewrites it with ``memory_edit``) and the public ``cairn history`` of the edited record.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cairn.clock import SystemClock
from cairn.demo.agent_script import (
    DEMO_AGENT_SCOPE,
    MODEL_ID,
    SESSIONS,
    SYSTEM_PROMPT,
    DemoSession,
)
from cairn.demo.processes import DemoStepError, print_heading, run_child
from cairn.embed.onnx import OnnxEmbedder
from cairn.errors import InvalidInputError
from cairn.local.store import open_store
from cairn.ports import Embedder, Stores
from cairn.runtime.converse import Answer, ConverseAgent
from cairn.runtime.session import MemorySession
from cairn.runtime.tool_definitions import DEFINITIONS, ToolDefinition
from cairn.testing.scripted_converse import ScriptedConverse

EDITED_LINE = re.compile(r"^edited: (\S+) v\d+$", flags=re.MULTILINE)


def _demo_gate(definition: ToolDefinition, arguments: Mapping[str, Any]) -> bool:
    """The demo's permission gate: it approves every memory write (``_show`` says so)."""
    return True


def _show(answer: Answer) -> None:
    print("  recall block assembled for this run (fixed for the whole run):")
    print("\n".join(f"    | {line}" for line in answer.run.block.splitlines()))
    for call in answer.tool_calls:
        print(f"  model -> {call.name} {json.dumps(dict(call.arguments), ensure_ascii=False)}")
        if (known := DEFINITIONS.get(call.name)) is not None and known.needs_permission:
            verdict = "approved" if call.permitted else "refused"
            print(f"      (writes memory: the host's permission gate {verdict} it)")
        print(f"      <- {json.dumps(call.outcome.content, ensure_ascii=False)}")
        if call.name == "memory_edit" and call.outcome.ok:
            print(f"edited: {call.outcome.content['record_id']} v{call.outcome.content['version']}")
    print(f"  assistant: {answer.text}")


def _converse(stores: Stores, embedder: Embedder, demo: DemoSession) -> None:
    print(f"\nsession {demo.session_id} ({demo.title})")
    session = MemorySession.local(
        stores,
        memory_id=DEMO_AGENT_SCOPE.memory_id,
        actor_id=DEMO_AGENT_SCOPE.actor_id,
        session_id=demo.session_id,
        embedder=embedder,
    )
    with session:
        for run in demo.runs:
            print(f"\n  {run.label}\n  user: {run.user}")
            agent = ConverseAgent(
                ScriptedConverse(run.replies),
                model_id=MODEL_ID,
                session=session,
                system_prompt=SYSTEM_PROMPT,
                gate=_demo_gate,
            )
            _show(agent.answer(run.user))
    print(f"\n  (the session's turns were written as events when it closed: {demo.session_id})")


def run_phase(args: argparse.Namespace) -> int:
    """``cairn demo-agent-phase NAME --store PATH``: one phase, in this process."""
    if args.phase not in SESSIONS:
        raise InvalidInputError(
            f"no demo phase named that; the phases are {', '.join(sorted(SESSIONS))}"
        )
    stores = open_store(args.store, SystemClock(), create=True)
    try:
        print(f"(process {os.getpid()}, store {args.store})")
        embedder = OnnxEmbedder()
        embedder.load()  # once for this process
        _converse(stores, embedder, SESSIONS[args.phase])
    finally:
        stores.close()
    return 0


def run_demo_agent(args: argparse.Namespace) -> int:
    """``cairn demo-agent``: learn in one process, recall and edit in another, then history."""
    store: Path = args.store.expanduser().resolve()
    if args.fresh:
        for path in (store, *(store.with_name(store.name + s) for s in ("-wal", "-shm"))):
            path.unlink(missing_ok=True)
    try:
        _run_steps(store)
    except DemoStepError as exc:
        return exc.status if exc.status > 0 else 1
    return 0


def _run_steps(store: Path) -> None:
    scope = DEMO_AGENT_SCOPE
    where = ["--store", str(store)]
    whose = ["--actor", scope.actor_id, "--memory", scope.memory_id]
    print(f"cairn demo-agent on the embedded store {store}")
    print(f"memory {scope.memory_id!r}, actor {scope.actor_id!r}; three separate processes")
    print("The model is scripted (offline); the session, the recall, the tools and the agent")
    print("loop are cairn's own, on the real store.")

    print_heading(
        "1/3",
        "Process A: run 1 files a lesson with the `learn` tool",
        "The loop offers learn, memory_edit and memory_recall; learn writes durable memory,",
        "so it goes through the host's permission gate first. A lesson is model-sourced:",
        "untrusted, and rendered as quoted data wherever it is recalled.",
    )
    run_child(["demo-agent-phase", "learn", *where])

    print_heading(
        "2/3",
        "Process B: a NEW process; run 2 recalls the lesson, run 3 edits it",
        "Each run assembles its recall block once, when it starts; the block stays the same",
        "for every model call of the run. Run 3 rewrites the lesson with memory_edit: a new",
        "version of the same record.",
    )
    edited = EDITED_LINE.findall(run_child(["demo-agent-phase", "recall-and-edit", *where]))
    if not edited:
        print("cairn: error: the agent did not edit the lesson; see above", file=sys.stderr)
        raise DemoStepError("recall-and-edit", 1)

    print_heading(
        "3/3",
        "Process C: `cairn history` of the edited record",
        "Both versions are kept: the lesson as learned, and the edit, each citing its run.",
    )
    run_child(["history", edited[-1], *where, *whose])
