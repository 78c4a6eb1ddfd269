"""Step 7, the journal: what a recall asked, under which knobs, and exactly what it showed.

An entry pins each selected record by id, version and content digest, plus the sha256 of the
rendered block, so ``replay`` can rebuild the block from those versions and prove it unchanged.
Journal ids are ``jrn-`` + 12 hex digits of epoch milliseconds + 20 random hex digits, so they
sort by creation time.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import datetime

from cairn.models import EmbedderId, JournalEntry, Scope
from cairn.recall.query import RecallPolicy, RecallQuery
from cairn.recall.ranking import Ranked

JOURNAL_PREFIX = "jrn-"


def new_journal_id(now: datetime) -> str:
    """A fresh, time-ordered journal id for a recall made at ``now``."""
    return f"{JOURNAL_PREFIX}{int(now.timestamp() * 1000):012x}{secrets.token_hex(10)}"


def block_digest(block: str) -> str:
    """sha256 hex of the block's UTF-8 bytes: equal digests mean byte-identical blocks."""
    return hashlib.sha256(block.encode("utf-8")).hexdigest()


def journal_entry(
    scope: Scope,
    query: RecallQuery,
    *,
    embedder: EmbedderId | None,
    policy: RecallPolicy,
    selected: Sequence[Ranked],
    block: str,
    now: datetime,
    weak: bool = False,
) -> JournalEntry:
    """The journal entry of one recall; ``selected`` in the order the block shows them.

    Validated whole, in one pass (the selected entries as plain values inside it)."""
    return JournalEntry.model_validate(
        {
            "journal_id": new_journal_id(now),
            "memory_id": scope.memory_id,
            "actor_id": scope.actor_id,
            "created_at": now,
            "query": query.text,
            "filters": {**query.filters(), "top_k": str(query.top_k)},
            "embedder": embedder,
            "policy": policy.knobs(),
            "selected": [
                {
                    "record_id": item.candidate.version.record_id,
                    "version": item.candidate.version.version,
                    "content_digest": item.candidate.version.content_digest,
                    "score": item.score,
                }
                for item in selected
            ],
            "block_digest": block_digest(block),
            "weak": weak,
        }
    )
