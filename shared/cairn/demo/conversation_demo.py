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
from collections.abc import Callable
from pathlib import Path

from cairn.clock import SystemClock
from cairn.demo import conversation_script as demo
from cairn.demo.processes import DemoStepError, command_name, print_heading, run_child
from cairn.embed.onnx import OnnxEmbedder
from cairn.errors import InvalidInputError
from cairn.local import (
    EmbeddedExtraction,
    FilesystemStagingStore,
    offline_model,
    staging_dir,
    wire_embedded,
)
from cairn.local.store import all_records, describe_source, open_store
from cairn.models import Conversational, EventInput
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.rollout.index import Rollout

# Entries per demo block (an agent's default is 8): the breakfast question is answered by the
# meeting, the peanut allergy and the oat-milk preference, and the session summary that
# restates the meeting takes a place among them; the drink ranks fifth (it shares no word).
DEMO_TOP_K = 5
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
        model=offline_model(),
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
        for version in all_records(stores, demo.DEMO_SCOPE)
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
    if args.phase not in PHASES:
        raise InvalidInputError(
            f"no demo phase named that; the phases are {', '.join(sorted(PHASES))}"
        )
    stores = open_store(args.store, SystemClock(), create=True)
    try:
        print(f"(process {os.getpid()}, store {args.store})")
        PHASES[args.phase](stores, Path(args.store).expanduser())
    finally:
        stores.close()
    return 0


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
    cairn = command_name()
    print(f'  {cairn} recall "what does the user drink?" {tail}')
    print(f"  {cairn} ls records {tail}")
    print(f"  {cairn} history <a record id from above> {tail}")
