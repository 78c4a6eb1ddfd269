"""``cairn recall QUERY --with-history``: records, turns and summaries in one ranking."""

from __future__ import annotations

import argparse
import json

from cairn.cli.opening import opened, require_known_actor
from cairn.cli.progress import index_build_bar
from cairn.embed.onnx import OnnxEmbedder
from cairn.history.search import recall_both
from cairn.recall import RecallQuery


def recall_with_history(args: argparse.Namespace, query: RecallQuery) -> int:
    """``recall --with-history``: records, turns and chunks in one ranking, journalled."""
    with opened(args) as ctx:
        require_known_actor(ctx, args.store)
        with index_build_bar():
            found = recall_both(
                ctx.scope, query, stores=ctx.stores, embedder=OnnxEmbedder(), clock=ctx.clock
            )
    if args.json:
        hits = [
            {
                "kind": hit.kind,
                "ref": hit.ref,
                "session_id": hit.session_id,
                "at": hit.at.isoformat(),
                "score": hit.score,
                "in_period": hit.in_period,
                "trust": hit.trust.value,
                "text": hit.text,
            }
            for hit in found.hits
        ]
        document = {"now": found.now.isoformat(), "hits": hits, "journal_id": found.journal_id}
        print(json.dumps(document, ensure_ascii=False))
    else:
        print(found.block)
        print(f"journal: {found.journal_id}")
    return 0
