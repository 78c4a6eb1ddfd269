"""Recall over turns finds words the query does not share (the real MiniLM model, SQLite)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.history.search import recall_both
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.ports import Embedder
from cairn.recall.index.passages import PassageIndex
from cairn.recall.query import RecallQuery
from cairn.store.sqlite import SQLiteBackend

pytestmark = pytest.mark.onnx

SCOPE = Scope(memory_id="m1", actor_id="tg:7")
T0 = datetime(2023, 7, 2, 19, 0, tzinfo=UTC)
TURNS = (
    "I adopted a golden retriever puppy last weekend",
    "The quarterly report is due on Friday",
    "My train to work was late again",
    "We repainted the kitchen a pale green",
    "I finally finished reading that novel about whales",
)


@pytest.mark.parametrize("use_model", [True, False])
def test_a_turn_is_found_by_meaning_when_it_shares_no_word_with_the_question(
    tmp_path: Path, use_model: bool
) -> None:
    clock = FixedClock(T0 + timedelta(days=30))
    stores = SQLiteBackend(tmp_path / "cairn.db", clock).stores()
    ids = [
        stores.events.append(
            SCOPE,
            EventInput(
                session_id="evening",
                event_timestamp=T0 + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=text),),
            ),
        ).event_id
        for i, text in enumerate(TURNS)
    ]
    embedder: Embedder | None = OnnxEmbedder() if use_model else None
    found = recall_both(
        SCOPE,
        RecallQuery(text="does the user have a pet dog?", top_k=3),
        stores=stores,
        embedder=embedder,
        clock=clock,
        kinds=frozenset({"turns"}),
        index=PassageIndex(),
    )
    stores.close()
    refs = [hit.ref for hit in found.hits]
    if use_model:
        assert refs[:1] == [ids[0]]
    else:  # keywords alone: no turn says "pet" or "dog"
        assert ids[0] not in refs
