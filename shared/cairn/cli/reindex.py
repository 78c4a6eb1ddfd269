"""``cairn reindex``: give every live record a vector of the embedder recall uses.

    cairn reindex [--memory M] [--actor A] [--store S]

For every actor of the memory (or just --actor), the live records without a vector of the
local ONNX embedder are embedded in batches of 32 and stored batch by batch
(``cairn.reembedding``), with a bar on stderr when it is a terminal. No version is written and
no content or trust changes; a kill loses at most the batch in flight, and running it again
embeds only what is still missing (a second run over a finished store embeds nothing). It
prints counts and the embedder's id, never memory content.
"""

from __future__ import annotations

import argparse
import sys

from cairn.cli.args import CliParser
from cairn.cli.errors import UsageError


def add_reindex_command(
    commands: argparse._SubParsersAction[CliParser], parents: list[CliParser]
) -> None:
    summary = (
        "re-embed the live records that have no vector of the embedder recall uses "
        "(resumable; a rerun embeds only what is missing)"
    )
    sub = commands.add_parser("reindex", help=summary, description=summary, parents=parents)
    sub.set_defaults(run=reindex)


def reindex(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cairn.clock import SystemClock
    from cairn.embed.onnx import OnnxEmbedder
    from cairn.local.store import open_store
    from cairn.models import Scope
    from cairn.ports import VectorWriter
    from cairn.reembedding import pending, reembed

    stores = open_store(args.store, SystemClock(), create=False)
    try:
        writer = stores.records
        if not isinstance(writer, VectorWriter):  # unreachable for the embedded store
            raise UsageError("this store cannot take vectors of another embedder")
        actors = [args.actor] if args.actor is not None else stores.records.actors(args.memory)
        embedder = OnnxEmbedder()
        work = [
            pending(stores.records, Scope(memory_id=args.memory, actor_id=actor), embedder.identity)
            for actor in actors
        ]
        total = sum(len(w.refs) for w in work)
        stored = skipped = 0
        with tqdm(
            total=total,
            desc="re-embedding",
            unit="record",
            file=sys.stderr,
            disable=None,  # shown only on a terminal
            leave=False,
        ) as bar:
            for scope_work in work:
                done = reembed(writer, scope_work, embedder, heard=bar.update)
                stored, skipped = stored + done.stored, skipped + done.skipped
    finally:
        stores.close()
    live = sum(w.live for w in work)
    line = (
        f"reindexed memory {args.memory} ({len(actors)} actor(s)) with "
        f"{embedder.identity.key}: {stored} of {live} live record(s) re-embedded, "
        f"{live - total} had a vector already"
    )
    if skipped:
        line += f"; {skipped} changed meanwhile and were left: run cairn reindex again"
    print(line)
    return 0
