"""One embedded process that talks and extracts into a shared SQLite file.

    python -m tests.processes.extract_writer <store> <writer> <actors> [ack]

It waits for a line on stdin (so every process starts at once), then, for each of ``actors``
actors, appends six turns to its own session -- the last one the same preference in every
process -- through ``open_embedded`` (the embedded worker extracting in its thread), and closes
(waiting for its extractions). Prints ``done`` at the end; with ``ack``, also the metadata
name of each event (``<writer>-<actor>-<turn>``) once its append returned.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

from cairn.clock import SystemClock
from cairn.embed.hashing import HashingEmbedder
from cairn.local import offline_model
from cairn.local.system import open_embedded
from cairn.models import Conversational, EventInput, Role, Scope

PREFERENCE = "I prefer green tea in the afternoon."
T0 = datetime(2026, 1, 1, 9, tzinfo=UTC)


def main(store: str, writer: str, actors: int, ack: bool = False) -> None:
    embedded = open_embedded(
        store, model=offline_model(), embedder=HashingEmbedder(), clock=SystemClock()
    )
    sys.stdin.readline()
    for actor in range(actors):
        scope = Scope(memory_id="default", actor_id=f"tg:{actor}")
        texts = [f"Filler {n} from {writer}." for n in range(5)] + [PREFERENCE]
        for n, text in enumerate(texts):
            name = f"{writer}-{actor}-{n}"
            event = EventInput(
                session_id=f"{writer}-{actor}",
                event_timestamp=T0 + timedelta(seconds=n),
                payload=(Conversational(role=Role.USER, text=text),),
                metadata={"n": name},
            )
            embedded.append(scope, event)
            if ack:
                print(name, flush=True)
    embedded.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), ack=sys.argv[4:] == ["ack"])
