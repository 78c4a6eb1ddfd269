"""The boot window over HTTP: the real boto3 ``bedrock-agentcore`` client against cairn's API on
a loopback port, the store behind it read directly for the local window of the same session.

A long session's window holds its newest turns within the budget, in order, numbered as the
pyramid numbers them, and equals the local window's turns; it is fixed for a run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cairn.api import Api, ApiContext
from cairn.api.server import RunningServer, start
from cairn.clock import FixedClock, SystemClock
from cairn.history import roll_up_session
from cairn.history.boot_window import BootWindow, read_window
from cairn.local import offline_model
from cairn.models import Scope
from cairn.ports import Stores
from cairn.runtime import MemorySession, SessionOptions
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder
from tests.compat.conftest import point_clients_at

boto3 = pytest.importorskip("boto3")

ACTOR = "tg:42"
SESSION = "long-talk"
TURNS = 240  # three ListEvents pages and more
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteBackend]:
    opened = SQLiteBackend(tmp_path_factory.mktemp("http-window") / "cairn.db")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def served(backend: SQLiteBackend) -> Iterator[RunningServer]:
    context = ApiContext.build(backend.stores(), embedder=HashingEmbedder(), clock=SystemClock())
    running = start(Api(context))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def client(served: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        point_clients_at(patch, served.url, tmp_path_factory.mktemp("aws"))
        yield boto3.session.Session().client("bedrock-agentcore", endpoint_url=served.url)


@pytest.fixture(scope="module")
def memory_id(client: Any, served: RunningServer) -> str:
    control = boto3.session.Session().client("bedrock-agentcore-control", endpoint_url=served.url)
    created = control.create_memory(
        name=f"window_{uuid.uuid4().hex[:12]}",
        eventExpiryDuration=30,
        memoryStrategies=[
            {"semanticMemoryStrategy": {"name": "facts", "namespaces": ["/facts/{actorId}/"]}}
        ],
    )
    found: str = created["memory"]["id"]
    return found


def _session(client: Any, memory_id: str, session_id: str, **options: Any) -> MemorySession:
    return MemorySession.agentcore(
        client,
        memory_id=memory_id,
        actor_id=ACTOR,
        session_id=session_id,
        clock=FixedClock(T0),  # each turn a millisecond after the last
        options=SessionOptions.model_validate(options),
    )


def _say(session: MemorySession, first: int, last: int) -> None:
    for seq in range(first, last + 1):
        role = "user" if seq % 2 else "assistant"
        session.add_turn(role, f"turn {seq}: the hive on the north side needs frame {seq} checked")


@pytest.fixture(scope="module")
def long_session(client: Any, memory_id: str) -> str:
    """``TURNS`` turns over HTTP, with a branch event and a blob-only event among them (neither
    is a turn)."""
    with _session(client, memory_id, SESSION) as session:
        _say(session, 1, TURNS // 2)
        session.flush()
        base = {"memoryId": memory_id, "actorId": ACTOR, "sessionId": SESSION}
        listed = client.list_events(**base, maxResults=1)
        client.create_event(
            **base,
            eventTimestamp=T0 + timedelta(seconds=1),
            payload=[{"conversational": {"content": {"text": "what if"}, "role": "USER"}}],
            branch={"name": "alt", "rootEventId": listed["events"][0]["eventId"]},
        )
        client.create_event(
            **base, eventTimestamp=T0 + timedelta(seconds=1), payload=[{"blob": '{"state": 1}'}]
        )
        _say(session, TURNS // 2 + 1, TURNS)
    return SESSION


def _local(stores: Stores, memory_id: str, session_id: str, budget: int) -> BootWindow:
    assert stores.chunks is not None
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    return read_window(stores.events, stores.chunks, scope, session_id, budget)


@pytest.mark.parametrize("budget", [300, 1_000, 4_000, 100_000])
def test_a_long_sessions_window_over_http_is_its_newest_turns_and_the_local_window(
    backend: SQLiteBackend, client: Any, memory_id: str, long_session: str, budget: int
) -> None:
    session = _session(client, memory_id, long_session)
    window = session.boot_window(budget)
    assert window is not None
    assert window.tokens <= budget
    assert all(item.level == 0 for item in window.items)
    numbers = [item.from_seq for item in window.items]
    assert numbers == list(range(window.omitted_turns + 1, TURNS + 1)), "newest, in order"
    words = [item.text.split(": ", 1)[1] for item in window.items]
    assert words == [
        f"turn {n}: the hive on the north side needs frame {n} checked" for n in numbers
    ]
    if budget == 100_000:
        assert window.omitted_turns == 0
    else:
        assert window.omitted_turns > 0
        assert f"(turns 1-{window.omitted_turns} are beyond this window)" in window.block
    local = _local(backend.stores(), memory_id, long_session, budget)
    assert window.block == local.block  # byte for byte, for a session not rolled up
    assert window.verbatim_events == local.verbatim_events


def test_over_http_the_window_holds_turns_only_and_they_are_the_local_windows_turns(
    backend: SQLiteBackend, client: Any, memory_id: str
) -> None:
    with _session(client, memory_id, "rolled") as session:
        _say(session, 1, 125)
    stores = backend.stores()
    assert stores.chunks is not None
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    while roll_up_session(
        stores.events, stores.chunks, offline_model(), scope, "rolled", clock=SystemClock()
    ).written:
        pass
    local = _local(stores, memory_id, "rolled", 2_000)
    assert any(item.level >= 1 for item in local.items), "the local window shows summaries"
    local_turns = [item.line for item in local.items if item.level == 0]
    window = _session(client, memory_id, "rolled").boot_window(2_000)
    assert window is not None
    assert window.tokens <= 2_000
    assert all(item.level == 0 for item in window.items), "no chunks over the wire"
    lines = [item.line for item in window.items]
    assert len(lines) >= len(local_turns) > 0
    assert lines[-len(local_turns) :] == local_turns, "the same newest turns, the same words"
    assert window.items[-1].from_seq == 125


def test_a_run_over_http_is_given_the_window_once_and_keeps_it(client: Any, memory_id: str) -> None:
    session = _session(client, memory_id, "run-window", history_budget_tokens=2_000)
    _say(session, 1, 3)  # still buffered: the run writes them first
    run = session.start_run("where were we?")
    assert "turn 3: the hive" in run.history_block
    assert run.history_block in run.system_prompt("You help with bees.")
    fixed = run.system_prompt("You help with bees.")
    _say(session, 4, 4)
    session.flush()
    assert run.system_prompt("You help with bees.") == fixed, "prefix-stable for the whole run"
    assert "turn 4: the hive" in session.start_run("and now?").history_block
    session.close()


def test_an_empty_session_over_http_has_an_empty_window(client: Any, memory_id: str) -> None:
    window = _session(client, memory_id, "never-spoke").boot_window(500)
    assert window is not None
    assert (window.items, window.omitted_turns) == ((), 0)
    assert window.block.endswith("(no earlier turns)")


def test_an_unreachable_endpoint_skips_the_window_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from botocore.config import Config

    point_clients_at(monkeypatch, "http://127.0.0.1:9", tmp_path)
    client = boto3.session.Session().client(
        "bedrock-agentcore",
        endpoint_url="http://127.0.0.1:9",  # the discard port: nothing listens there
        config=Config(retries={"max_attempts": 1}, connect_timeout=1),
    )
    session = MemorySession.agentcore(
        client,
        memory_id="nowhere-memory-0001",
        actor_id=ACTOR,
        session_id="s",
        options=SessionOptions(history_budget_tokens=500),
    )
    assert session.boot_window(500) is None
    assert session.start_run("anything").history_block == ""


def test_the_window_over_http_keeps_utc_times_whatever_the_local_zone(
    backend: SQLiteBackend,
    client: Any,
    memory_id: str,
    long_session: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "America/New_York")  # the client parses wire times in local time
    time.tzset()
    try:
        window = _session(client, memory_id, long_session).boot_window(1_000)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert window is not None
    assert window.block == _local(backend.stores(), memory_id, long_session, 1_000).block
