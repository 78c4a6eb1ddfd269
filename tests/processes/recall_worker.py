"""A process that recalls and writes on one shared SQLite file, one command a line.

    python -m tests.processes.recall_worker <store>

Reads lines from stdin: ``recall <text>`` prints one JSON line (the contents recalled, and how
many snapshots this process has mapped from a file and published to one so far, and how many
recalls it answered by catching its snapshot up by a delta); ``write <text>`` writes one record
and prints ``ok``; ``retract <text>`` and ``erase <text>`` retract or erase the record with that
content and print ``ok``. The process keeps its backend and recall index open between lines,
as an agent's process does between turns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cairn.changes import Create, NewRecord, Retract, Vector
from cairn.clock import SystemClock
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery, recall
from cairn.recall.index import EmbeddedRecallIndex, index_of, read_rows
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="m1", actor_id="a1")
EMBEDDER = HashingEmbedder(dims=32)
# Every live record is shown: no floor, no paraphrase dedup.
POLICY = RecallPolicy(relevance_floor=0.0, weak_floor=0.0, dedup_cosine=1.0, dedup_jaccard=1.0)


def record(content: str) -> NewRecord:
    values = tuple(EMBEDDER.embed([content])[0])
    return NewRecord(
        namespace="/facts/a1/",
        content=content,
        sources=(Source(kind=SourceKind.USER),),
        vector=Vector(embedder=EMBEDDER.identity, values=values),
    )


def main(store: str) -> None:
    clock = SystemClock()
    with SQLiteBackend(Path(store), clock) as backend:
        stores = backend.stores()
        for line in sys.stdin:
            command, _, text = line.rstrip("\n").partition(" ")
            if command == "recall":
                found = recall(
                    SCOPE,
                    RecallQuery(text=text, top_k=20),
                    stores=stores,
                    embedder=EMBEDDER,
                    clock=clock,
                    policy=POLICY,
                    journal=False,
                )
                index = index_of(stores)
                assert isinstance(index, EmbeddedRecallIndex)
                assert index.persisted is not None
                contents = sorted(e.version.content for e in found.entries)
                counts = {"mapped": index.persisted.mapped, "published": index.persisted.published}
                counts["caught_up"] = index.caught_up
                print(json.dumps({"contents": contents, **counts}), flush=True)
            elif command == "write":
                stores.records.apply(SCOPE, [Create(record=record(text))])
                print("ok", flush=True)
            elif command in ("retract", "erase"):
                rows = read_rows(stores.records, SCOPE, None)
                (found_id,) = [row.record_id for row in rows if row.content == text]
                if command == "erase":
                    stores.records.erase(SCOPE, found_id)
                else:
                    stores.records.apply(SCOPE, [Retract(record_id=found_id)])
                print("ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
