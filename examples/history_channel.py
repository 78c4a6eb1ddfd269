"""The two channels of memory, offline: a long conversation kept as a drillable history.

    python examples/history_channel.py [--db PATH]

Appends a 120-turn conversation to an embedded SQLite store through a ``MemorySession``,
rolls it up into the history pyramid with the offline model (twelve level-1 chunks, one level-2
chunk), then shows the ways back into it: the boot window a resumed run starts with, the
period axis (``by_period``), drill-down from the top chunk to the turns, and one recall over
records, turns and chunks (``recall_both``; by keywords here, with no embedder). No model, no
network; ``tests/unit/test_history_example.py`` runs it.
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.clock import FixedClock
from cairn.history import roll_up_session
from cairn.history.axes import by_period, children
from cairn.history.search import recall_both
from cairn.local import offline_model
from cairn.models import Role, Scope
from cairn.recall import RecallQuery
from cairn.runtime import MemorySession, SessionOptions
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="example", actor_id="tg:42")
START = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
TOPICS = (
    (
        "The bees in the north hive were calm this morning.",
        "I added a second super to the north hive.",
        "Should the north hive be treated for mites in April?",
        "The queen in the north hive is marked blue.",
        "Honey from the north hive tastes of lime blossom.",
    ),
    (
        "The garden beds need compost before spring.",
        "Tomatoes go by the south fence of the garden this year.",
        "Basil grows best next to the tomatoes in the garden.",
        "The garden hose split again on Sunday.",
        "Sow the garden peas in the first week of April.",
    ),
    (
        "The Oslo trip is booked for the second week of May.",
        "In Oslo we want to see the Munch museum.",
        "The Oslo hotel is near the harbour.",
        "Pack a raincoat for Oslo in May.",
        "The train from Oslo airport takes twenty minutes.",
    ),
)


REPLIES = ("I'll keep in mind that {}.", "Good to know {}.", "So {}; anything else?")


def converse(session: MemorySession, clock: FixedClock, turns: int) -> None:
    """A user and an assistant talking, a minute a turn, about one topic per forty turns."""
    for i in range(turns):
        lines = TOPICS[i // 40 % len(TOPICS)]
        said = lines[i // 2 % len(lines)]
        if i % 2 == 0:
            session.add_turn(Role.USER, said)
        else:
            reply = REPLIES[i // 2 % len(REPLIES)]
            session.add_turn(Role.ASSISTANT, reply.format(said[0].lower() + said[1:-1]))
        clock.advance(minutes=1)
    session.flush()


def main(db: Path) -> dict[str, object]:
    clock = FixedClock(START)
    with SQLiteBackend(db, clock) as backend:
        stores = backend.stores()
        assert stores.chunks is not None
        session = MemorySession.local(
            stores,
            memory_id=SCOPE.memory_id,
            actor_id=SCOPE.actor_id,
            session_id="evening",
            clock=clock,
            options=SessionOptions(history_budget_tokens=800),
        )
        converse(session, clock, 120)

        # Background work: the rollup job (the embedded worker or a schedule would run it).
        report = roll_up_session(
            stores.events, stores.chunks, offline_model(), SCOPE, "evening", clock=clock
        )
        print(f"rolled up: {report.written} (chunks per level)")

        # Channel 1, resuming: the run starts with the whole conversation in 800 tokens.
        run = session.start_run("where were we?")
        print(run.history_block)

        # Time: what happened in the second half hour?
        hour = by_period(
            stores.records,
            stores.events,
            stores.chunks,
            SCOPE,
            START + timedelta(minutes=30),
            START + timedelta(minutes=60),
            kinds=frozenset({"chunks"}),
        )
        print("\nchunks of 18:30-19:00:", [hit.ref for hit in hour])

        # Drill-down: the level-2 chunk -> its level-1 chunks -> the turns of the first.
        (top,) = stores.chunks.list_chunks(SCOPE, "evening", level=2)
        parts = children(stores.events, stores.chunks, SCOPE, "evening", top.chunk_id)
        first_turns = children(stores.events, stores.chunks, SCOPE, "evening", parts[0].chunk_id)  # type: ignore[union-attr]
        print(f"\n{top.chunk_id}: {len(parts)} parts; the first holds {len(first_turns)} turns")

        # Both channels at once: records, turns and chunks in one ranking.
        found = recall_both(
            SCOPE,
            RecallQuery(text="the Oslo hotel", top_k=3),
            stores=stores,
            embedder=None,  # keywords only, offline; give an Embedder for meaning
            clock=clock,
        )
        for hit in found.hits:
            print(f"{hit.kind:7} {hit.ref} {hit.score:.2f} {hit.text[:60]!r}")
        return {
            "written": report.written,
            "block": run.history_block,
            "period": [hit.ref for hit in hour],
            "parts": len(parts),
            "first_turns": len(first_turns),
            "both": [(hit.kind, hit.text) for hit in found.hits],
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, help="the SQLite file (default: a temporary one)")
    args = parser.parse_args()
    if args.db is not None:
        main(args.db)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder) / "history.db")
