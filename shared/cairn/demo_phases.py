"""``cairn demo``: memory written in one process, recalled and replayed from others.

The parent only prints headings and runs three child processes on the same embedded store:
``demo-phase file`` (a scripted conversation; the offline agent in ``cairn.demo`` files what the
user stated), ``demo-phase recall`` (new questions, answered from the store, each journaled) and
the public ``cairn replay`` (the journaled versions re-rendered, no new search). Each child loads
the embedding model at most once.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cairn import demo
from cairn.changes import MAX_CHANGES_PER_APPLY, NewRecord
from cairn.cli_commands import list_all, open_backend, with_vectors
from cairn.cli_output import describe_source
from cairn.clock import SystemClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.models import Conversational, EventInput, RecordVersion
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall

DEMO_TOP_K = 4
JOURNAL_LINE = re.compile(r"^journal: (\S+)$", flags=re.MULTILINE)


def _converse(stores: Stores) -> list[NewRecord]:
    """Append every scripted turn as an event; return what the agent would file, in order."""
    clock = SystemClock()
    candidates: list[NewRecord] = []
    for session in demo.CONVERSATION:
        print(f"\nsession {session.session_id} ({session.title})")
        for turn in session.turns:
            event = stores.events.append(
                demo.DEMO_SCOPE,
                EventInput(
                    session_id=session.session_id,
                    event_timestamp=clock.now(),
                    payload=(Conversational(role=turn.role, text=turn.text),),
                ),
            )
            print(f"  {turn.role.value.lower():>9}: {turn.text}")
            for record in demo.read_event(event):
                print(f"             -> to file [{record.category}] {record.content}")
                candidates.append(record)
    return candidates


def file_phase(stores: Stores) -> None:
    """The first process: converse, then file the statements in atomic batches."""
    candidates = _converse(stores)
    scope = demo.DEMO_SCOPE
    live = list_all(stores, scope)
    changes = demo.plan_filing(with_vectors(OnnxEmbedder(), candidates), live)
    written: list[RecordVersion] = []
    for start in range(0, len(changes), MAX_CHANGES_PER_APPLY):
        batch = changes[start : start + MAX_CHANGES_PER_APPLY]
        written.extend(stores.records.apply(scope, batch))
    created = sum(1 for version in written if version.version == 1)
    summary = f"\nThe agent filed {created} new record(s), each citing the turn it came from"
    if confirmed := len(written) - created:
        summary += f", and confirmed {confirmed} it already held (an exact repeat folds in)"
    print(summary + ":")
    for version in written:
        verb = "filed" if version.version == 1 else f"confirmed (seen {version.seen_count}x)"
        print(f"  {verb} {version.record_id} [{version.category}] {version.content}")
        earlier = len(version.sources) - 1
        cited = describe_source(version.sources[-1]) + (f" (+{earlier} earlier)" if earlier else "")
        print(f"        source: {cited}")


def recall_phase(stores: Stores) -> None:
    """The second process: new questions answered from the store, each recall journaled."""
    embedder = OnnxEmbedder()
    embedder.load()  # once for this process; every question below reuses it
    for question in demo.QUESTIONS:
        print(f'\nquestion: "{question}"\n')
        found = recall(
            demo.DEMO_SCOPE,
            RecallQuery(text=question, top_k=DEMO_TOP_K),
            stores=stores,
            embedder=embedder,
            clock=SystemClock(),
        )
        print(found.block)
        print(f"journal: {found.journal_id}")


PHASES: dict[str, Callable[[Stores], None]] = {"file": file_phase, "recall": recall_phase}


def run_phase(args: argparse.Namespace) -> int:
    """``cairn demo-phase NAME --store PATH``: one phase, in this process."""
    stores = open_backend(args.store, SystemClock(), create=True)
    try:
        print(f"(process {os.getpid()}, store {args.store})")
        PHASES[args.phase](stores)
    finally:
        stores.close()
    return 0


def _heading(step: str, title: str, *explanation: str) -> None:
    rule = "=" * 78
    print(f"\n{rule}\n{step}  {title}\n{rule}", *explanation, sep="\n", flush=True)


def _child(arguments: Sequence[str]) -> str:
    """Run ``python -m cairn ARGUMENTS``, echo its output, and return it; stop if it failed."""
    completed = subprocess.run(  # noqa: S603 - our own interpreter and module, fixed arguments
        [sys.executable, "-m", "cairn", *arguments],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    print(completed.stdout, end="", flush=True)
    if completed.returncode != 0:
        raise DemoStepError(arguments[0], completed.returncode)
    return completed.stdout


class DemoStepError(Exception):
    """A child process of the demo failed; its own one-line error is already on stderr."""

    def __init__(self, step: str, status: int) -> None:
        super().__init__(f"the demo's {step!r} process failed with exit status {status}")
        self.status = status


def run_demo(args: argparse.Namespace) -> int:
    """``cairn demo``: write in one process, recall in another, replay in a third."""
    store: Path = args.store.expanduser().resolve()
    if args.fresh:
        for path in (store, *(store.with_name(store.name + s) for s in ("-wal", "-shm"))):
            path.unlink(missing_ok=True)
    try:
        _run_steps(store)
    except DemoStepError as exc:
        # The child already reported its failure in one line on stderr; a signal counts as 1.
        return exc.status if exc.status > 0 else 1
    return 0


def _run_steps(store: Path) -> None:
    scope = demo.DEMO_SCOPE
    where = ["--store", str(store)]
    whose = ["--actor", scope.actor_id, "--memory", scope.memory_id]
    print(f"cairn demo on the embedded store {store}")
    print(f"memory {scope.memory_id!r}, actor {scope.actor_id!r}; three separate processes")

    _heading(
        "1/3",
        "Process A: a conversation, and an agent that files what the user stated",
        "Each turn is appended as an event. The agent is offline and rule-based (not an LLM):",
        "it files each explicit first-person statement as a record sourced 'user', citing",
        "the event and session it came from.",
    )
    _child(["demo-phase", "file", *where])

    _heading(
        "2/3",
        "Process B: a NEW process opens the same store and recalls",
        "Process A has exited; everything below comes from the store on disk. Each recall",
        "is journaled: the query and the exact record versions it selected.",
    )
    journal_ids = JOURNAL_LINE.findall(_child(["demo-phase", "recall", *where]))

    _heading(
        "3/3",
        "Process C: `cairn replay` of each journal",
        "Replay never searches: it re-materialises the journaled versions, re-renders the",
        "block and checks it byte for byte against the digest recorded at recall time.",
    )
    _child(["replay", *journal_ids, *where, *whose])

    print("\nMemory outlived the processes that wrote it. Explore it yourself:")
    tail = f"--store {store} --actor {scope.actor_id}"
    print(f'  cairn recall "what does the user drink?" {tail}')
    print(f"  cairn as-of 2099-01-01 {tail}")
    print(f"  cairn history <a record id from above> {tail}")
