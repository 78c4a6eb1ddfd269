"""``memory_recall`` with ``channels`` and ``MemorySession.recall``: records, turns and chunks in
one ranking, journalled and replayable, on every backend; the tool's schema in every host
format names the channels."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.history.journalled import replay
from cairn.history.pyramid import level_one_chunk
from cairn.history.turns import turns_after
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.runtime import MemorySession
from cairn.runtime.tool_definitions import DEFINITIONS
from cairn.runtime.tool_formats import converse_tool_config, openai_tools
from cairn.runtime.tool_inputs import MEMORY_RECALL
from cairn.testing import HashingEmbedder
from tests.conformance.backends import BACKENDS, open_backend

SCOPE = Scope(memory_id="mem-1", actor_id="tg:42")
MARCH = datetime(2023, 3, 14, 18, 0, tzinfo=UTC)


@pytest.fixture(params=sorted(BACKENDS))
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    opened = open_backend(request.param, FixedClock(MARCH + timedelta(days=1)), tmp_path)
    yield opened
    opened.close()


def _history(stores: Stores) -> tuple[str, str, str]:
    assert stores.chunks is not None
    record = NewRecord(
        namespace="/facts/tg:42/",
        content="The user drinks oolong tea every morning",
        sources=(Source(kind=SourceKind.USER),),
    )
    (written,) = stores.records.apply(SCOPE, [Create(record=record)])
    said = ["I brewed oolong tea at dawn"] + [
        f"the stock market moved {i} points" for i in range(9)
    ]
    first = ""
    for i, text in enumerate(said):
        event = stores.events.append(
            SCOPE,
            EventInput(
                session_id="s1",
                event_timestamp=MARCH + timedelta(minutes=i),
                payload=(Conversational(role=Role.USER, text=text),),
            ),
        )
        first = first or event.event_id
    turns = turns_after(stores.events, SCOPE, "s1", None)
    chunk = stores.chunks.put(SCOPE, level_one_chunk(SCOPE, turns, "topics: oolong tea", MARCH))
    return written.record_id, first, chunk.chunk_id


def _session(stores: Stores) -> MemorySession:
    return MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s2",
        embedder=HashingEmbedder(),
        clock=FixedClock(MARCH + timedelta(days=1)),
    )


def test_memory_recall_over_every_channel_is_one_ranking_journalled_and_replayable(
    stores: Stores,
) -> None:
    record, turn, chunk = _history(stores)
    run = _session(stores).start_run("tea")
    answer = run.tools.call(
        MEMORY_RECALL, {"query": "oolong tea", "channels": ["records", "turns", "chunks"]}
    )
    assert answer.ok, answer.content
    shown = {(r["kind"], r["id"]) for r in answer.content["results"]}
    assert {("records", record), ("turns", turn), ("chunks", chunk)} <= shown
    turn_line = next(r for r in answer.content["results"] if r["id"] == turn)
    assert turn_line["session_id"] == "s1"
    assert turn_line["content"] == "USER: I brewed oolong tea at dawn"
    assert turn_line["trust"] == "trusted"

    replayed = replay(SCOPE, answer.content["journal_id"], stores=stores)
    assert replayed.matches
    assert [p.ref for p in replayed.journal.shown] == [r["id"] for r in answer.content["results"]]


def test_turns_alone_leave_records_out_and_records_alone_is_the_default(stores: Stores) -> None:
    record, turn, _ = _history(stores)
    run = _session(stores).start_run("tea")
    turns = run.tools.call(MEMORY_RECALL, {"query": "oolong tea", "channels": ["turns"]})
    assert [(r["kind"], r["id"]) for r in turns.content["results"]] == [("turns", turn)]
    default = run.tools.call(MEMORY_RECALL, {"query": "oolong tea"})
    assert [r["record_id"] for r in default.content["results"]] == [record]


@pytest.mark.parametrize(
    ("channels", "said"),
    [
        ([], "channels"),
        (["records", "records"], "name each channel once"),
        (["emails"], "channels"),
    ],
)
def test_a_bad_channels_argument_is_refused_and_nothing_is_journalled(
    stores: Stores, channels: list[str], said: str
) -> None:
    _history(stores)
    run = _session(stores).start_run("tea")
    before = stores.journal.head(SCOPE)
    refused = run.tools.call(MEMORY_RECALL, {"query": "oolong tea", "channels": channels})
    assert not refused.ok
    assert said in refused.content["error"]
    assert stores.journal.head(SCOPE) == before


def test_memory_session_recall_reads_its_own_buffered_turns_and_journals(stores: Stores) -> None:
    _history(stores)
    session = _session(stores)
    session.add_turn("user", "my kettle is a copper one from Kyoto")
    found = session.recall("copper kettle Kyoto", channels=("turns",))
    assert [h.kind for h in found.hits] == ["turns"]
    assert found.hits[0].session_id == "s2"
    assert found.journal_id is not None
    assert replay(SCOPE, found.journal_id, stores=stores).block == found.block
    with pytest.raises(Exception, match="channels must name"):
        session.recall("tea", channels=("email",))


def test_a_memoryless_session_recalls_nothing() -> None:
    found = MemorySession.memoryless().recall("tea", channels=("turns",))
    assert found.hits == ()
    assert found.journal_id is None


def test_every_host_format_offers_the_channels() -> None:
    definition = DEFINITIONS[MEMORY_RECALL]
    config = converse_tool_config([definition])
    assert config is not None
    (spec,) = [t["toolSpec"] for t in config["tools"]]
    (openai,) = openai_tools([definition])
    for schema in (spec["inputSchema"]["json"], openai["function"]["parameters"]):
        channels = schema["properties"]["channels"]
        assert channels["type"] == "array"
        assert channels["items"]["enum"] == ["records", "turns", "chunks"]
        assert channels["default"] == ["records"]
        assert "channels" not in schema.get("required", [])
