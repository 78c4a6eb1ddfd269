"""``cairn recall``: print the rendered recall block for a query and the journal id that pins it.

Its own module, importing only the recall path (the store, the recall pipeline, the ONNX
embedder), because it runs once per agent turn: a whole ``cairn recall`` process pays for every
module it imports (docs/benchmarks.md, speed).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from cairn.cli.opening import opened, require_known_actor
from cairn.cli.progress import index_build_bar
from cairn.embed.onnx import OnnxEmbedder
from cairn.recall import RecallQuery, Recollection
from cairn.recall import recall as recall_block


def recall(args: argparse.Namespace) -> int:
    """Print the rendered recall block for QUERY, then the journal id that pins it."""
    query = RecallQuery(text=args.query, namespace_prefix=args.namespace, top_k=args.top_k)
    if args.with_history:
        from cairn.cli.recall_history import recall_with_history

        return recall_with_history(args, query)
    with opened(args) as ctx:
        require_known_actor(ctx, args.store)
        with index_build_bar():
            found = recall_block(
                ctx.scope, query, stores=ctx.stores, embedder=OnnxEmbedder(), clock=ctx.clock
            )
    if args.json:
        print(json.dumps(recollection_json(found), ensure_ascii=False))
    else:
        print(found.block)
        print(f"journal: {found.journal_id}")
    return 0


def recollection_json(found: Recollection) -> dict[str, Any]:
    """The block, its journal id, each entry (full content, score, trust) and the counts."""
    entries = [
        {
            "record_id": entry.version.record_id,
            "version": entry.version.version,
            "score": entry.score,
            "content": entry.version.content,
            "shown": entry.text,
            "trust": entry.version.trust.value,
            "confidence": entry.version.confidence,
        }
        for entry in found.entries
    ]
    return {
        "block": found.block,
        "journal_id": found.journal_id,
        "entries": entries,
        "counts": dataclasses.asdict(found.counts),
    }
