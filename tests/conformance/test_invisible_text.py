"""Invisible text on every backend (issue 17, class 4): the store keeps content exactly, and
what recall and replay render for a model shows each hidden character as a visible marker."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.consolidate.commit import consolidate_scope
from cairn.extract.extractor import extract_rollout
from cairn.memories import StrategyKind
from cairn.model_request import ModelRequest
from cairn.models import Scope, Source
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.replay import replay
from cairn.runtime import MemorySession
from cairn.testing import HashingEmbedder, ScriptedModel
from cairn.visible_text import is_invisible
from tests.conformance.samples import SCOPE, TOOL, USER, create
from tests.unit.consolidation_support import INFERRED, Bench, answer
from tests.unit.consolidation_support import SCOPE as CONSOLIDATION_SCOPE
from tests.unit.extraction_inputs import (
    ACTOR,
    FACTS,
    MEMORY_ID,
    T0,
    candidates,
    decisions,
    memory,
    message,
    rollout,
    strategy,
)

# "Ignore" spelled in tag characters, a right-to-left override, an isolate, zero-width joiners,
# a byte-order mark and a terminal escape that would clear the screen.
SMUGGLED = (
    "Allergic to penicillin"
    "\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"
    " \u202etxet desrever\u202c \u2066isolated\u2069 zero\u200bwidth\u200d\ufeff"
    " \x1b[2J"
)
EXTRACTED = Scope(memory_id=MEMORY_ID, actor_id=ACTOR)


@pytest.mark.parametrize("source", [USER, TOOL], ids=["trusted", "untrusted"])
def test_hidden_characters_reach_neither_the_block_nor_its_replay(
    stores: Stores, clock: FixedClock, source: Source
) -> None:
    created = create(stores, SMUGGLED, sources=(source,))

    found = recall(
        SCOPE, RecallQuery(text="penicillin allergy"), stores=stores, embedder=None, clock=clock
    )
    assert found.journal_id is not None
    replayed = replay(SCOPE, found.journal_id, stores=stores)

    assert stores.records.get(SCOPE, created.record_id).content == SMUGGLED
    assert created.record_id in found.block
    for block in (found.block, replayed.block):
        assert not [ch for ch in block if is_invisible(ch) and ch != "\n"], repr(block)
        for shown in ("<U+E0049>", "<U+202E>", "<U+2066>", "<U+200B>", "<U+FEFF>"):
            assert shown in block


def _hidden(text: str) -> list[str]:
    return [ch for ch in text if is_invisible(ch)]


def _assert_marked(request: ModelRequest) -> None:
    shown = "".join(m.text for m in request.messages)  # the data; the system prompt is ours
    assert not _hidden(shown), repr(shown)
    for marker in ("<U+E0049>", "<U+202E>", "<U+2066>", "<U+200B>", "<U+FEFF>"):
        assert marker in shown


def test_extraction_and_formation_prompts_show_hidden_characters_as_markers(
    stores: Stores,
) -> None:
    create(stores, SMUGGLED, scope=EXTRACTED, namespace=f"/facts/{ACTOR}/")
    model = ScriptedModel(
        [
            candidates(("The user is allergic to penicillin.", [1])),
            decisions({"candidate": 1, "action": "create"}),
        ]
    )

    extract_rollout(
        rollout(message(1, SMUGGLED), strategy_ids=(FACTS,)),
        memory(strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/")),
        stores=stores,
        model=model,
        embedder=HashingEmbedder(),
        clock=FixedClock(T0),
    )

    assert len(model.requests) == 2  # the extraction call, then the judge's
    for request in model.requests:
        _assert_marked(request)


def test_a_consolidation_prompt_shows_hidden_characters_as_markers(
    stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    bench = Bench(tmp_path, stores=stores, clock=clock)
    bench.remember(SMUGGLED, sources=(INFERRED,))
    bench.run(f"About that: {SMUGGLED}")
    bench.model.queue(answer())

    consolidate_scope(CONSOLIDATION_SCOPE, bench.consolidator())

    (request,) = bench.model.requests
    _assert_marked(request)


def test_memory_recall_tool_output_shows_hidden_characters_as_markers(stores: Stores) -> None:
    create(stores, SMUGGLED, sources=(TOOL,))
    session = MemorySession.local(
        stores, memory_id=SCOPE.memory_id, actor_id=SCOPE.actor_id, session_id="s1"
    )

    outcome = session.start_run("hello").tools.call(
        "memory_recall", {"query": "penicillin allergy"}
    )

    (result,) = outcome.content["results"]
    assert not _hidden(result["content"]), repr(result["content"])
    assert "<U+E0049>" in result["content"]
    assert "<U+202E>" in result["content"]
    assert stores.records.list_records(SCOPE).items[0].content == SMUGGLED  # stored exactly
