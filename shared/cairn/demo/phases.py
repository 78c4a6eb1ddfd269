"""``cairn demo``: memory written in one process, recalled and replayed from others.

The parent only prints headings and runs three child processes on the same embedded store:
``demo-phase file`` (a scripted conversation; the extraction pipeline counts its turns, stages
rollouts and extracts records from them in a background worker, with the offline heuristic
model), ``demo-phase recall`` (new questions, answered from the store, each journaled) and
the public ``cairn replay`` (the journaled versions re-rendered, no new search). Each child loads
the embedding model at most once.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cairn.cli.commands import list_all, open_backend
from cairn.cli.output import describe_source
from cairn.clock import SystemClock
from cairn.demo import script as demo
from cairn.embed.onnx import OnnxEmbedder
from cairn.llm.heuristic import HeuristicModel
from cairn.local.staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, staging_dir, wire_embedded
from cairn.models import Conversational, EventInput
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.rollout.index import Rollout

DEMO_TOP_K = 4
JOURNAL_LINE = re.compile(r"^journal: (\S+)$", flags=re.MULTILINE)


def _converse(extraction: EmbeddedExtraction) -> list[Rollout]:
    """Append every scripted turn as an event; return the rollouts the triggers released."""
    clock = SystemClock()
    released: list[Rollout] = []
    for session in demo.CONVERSATION:
        print(f"\nsession {session.session_id} ({session.title})")
        for turn in session.turns:
            appended = extraction.append(
                demo.DEMO_SCOPE,
                EventInput(
                    session_id=session.session_id,
                    event_timestamp=clock.now(),
                    payload=(Conversational(role=turn.role, text=turn.text),),
                ),
            )
            print(f"  {turn.role.value.lower():>9}: {turn.text}")
            if (claim := appended.claim) is not None:
                print(
                    f"             -> trigger ({claim.trigger.replace('_', ' ')}): "
                    f"{len(claim.events)} turns staged as rollout {claim.rollout_id}, "
                    "extracting in the background"
                )
                released.append(claim)
    return released


def file_phase(stores: Stores, store: Path) -> None:
    """The first process: converse; the background worker extracts records from the turns."""
    embedder = OnnxEmbedder()
    embedder.load()
    extraction = wire_embedded(
        stores,
        FilesystemStagingStore(staging_dir(store)),
        model=HeuristicModel(),
        embedder=embedder,
        clock=SystemClock(),
    )
    extraction.worker.start()
    try:
        released = _converse(extraction)
    finally:
        extraction.worker.drain()  # every released rollout is extracted before we exit
        extraction.worker.stop()
    _report_extracted(stores, released)


def _report_extracted(stores: Stores, released: list[Rollout]) -> None:
    rollout_ids = {claim.rollout_id for claim in released}
    extracted = [
        version
        for version in list_all(stores, demo.DEMO_SCOPE)
        if any(source.rollout_id in rollout_ids for source in version.sources)
    ]
    print(
        f"\nThe extractor filed or confirmed {len(extracted)} record(s) from {len(released)} "
        "rollout(s), with no explicit `remember`; each cites the rollout and the turn it came from:"
    )
    for version in extracted:
        verb = "filed" if version.seen_count == 1 else f"confirmed (seen {version.seen_count}x)"
        print(f"  {verb} {version.record_id} [{version.category}] {version.content}")
        cited = [s for s in version.sources if s.rollout_id in rollout_ids]
        print(f"        source: {describe_source(cited[-1])}")


def recall_phase(stores: Stores, store: Path) -> None:
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


PHASES: dict[str, Callable[[Stores, Path], None]] = {"file": file_phase, "recall": recall_phase}


def run_phase(args: argparse.Namespace) -> int:
    """``cairn demo-phase NAME --store PATH``: one phase, in this process."""
    stores = open_backend(args.store, SystemClock(), create=True)
    try:
        print(f"(process {os.getpid()}, store {args.store})")
        PHASES[args.phase](stores, Path(args.store).expanduser())
    finally:
        stores.close()
    return 0


def print_heading(step: str, title: str, *explanation: str) -> None:
    """Print a demo step's ruled heading and its explanation lines, flushed before a child runs."""
    rule = "=" * 78
    print(f"\n{rule}\n{step}  {title}\n{rule}", *explanation, sep="\n", flush=True)


def run_child(arguments: Sequence[str]) -> str:
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
        shutil.rmtree(staging_dir(store), ignore_errors=True)
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

    print_heading(
        "1/3",
        "Process A: a conversation; extraction files what the user stated",
        "Each turn is appended as an event and counted. Every 6 turns a trigger stages the",
        "batch as a rollout, and a background worker extracts records from it with the offline",
        "heuristic model (rules, not an LLM), citing the rollout and the turn: no `remember`.",
    )
    run_child(["demo-phase", "file", *where])

    print_heading(
        "2/3",
        "Process B: a NEW process opens the same store and recalls",
        "Process A has exited; everything below comes from the store on disk. Each recall",
        "is journaled: the query and the exact record versions it selected.",
    )
    journal_ids = JOURNAL_LINE.findall(run_child(["demo-phase", "recall", *where]))

    print_heading(
        "3/3",
        "Process C: `cairn replay` of each journal",
        "Replay never searches: it re-materialises the journaled versions, re-renders the",
        "block and checks it byte for byte against the digest recorded at recall time.",
    )
    run_child(["replay", *journal_ids, *where, *whose])

    print("\nMemory outlived the processes that wrote it. Explore it yourself:")
    tail = f"--store {store} --actor {scope.actor_id}"
    print(f'  cairn recall "what does the user drink?" {tail}')
    print(f"  cairn as-of 2099-01-01 {tail}")
    print(f"  cairn history <a record id from above> {tail}")
