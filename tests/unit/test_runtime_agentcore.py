"""MemorySession over HTTP: the real boto3 ``bedrock-agentcore`` client against cairn's API
served on a free loopback port (as ``cairn serve`` serves it), the store behind it read directly.

Turns become events (a retried append is stored once), lessons become records in the actor's
scope, recall reaches the next run's block, edits are revisions, and a session never reads or
edits outside the namespaces its templates fill with its actor id.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cairn.api import Api, ApiContext
from cairn.api.server import RunningServer, start
from cairn.aws.agentcore_client import call
from cairn.clock import SystemClock
from cairn.errors import ConfigurationError, StoreUnavailableError
from cairn.models import SPEAKER_METADATA_KEY, Conversational, EventInput, Scope, Status
from cairn.ports import Stores
from cairn.recall import RecallPolicy
from cairn.runtime import MemorySession, SessionOptions
from cairn.runtime.agentcore import AgentCoreSessionStore
from cairn.runtime.tool_inputs import MEMORY_RECALL
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder
from tests.compat.conftest import point_clients_at

boto3 = pytest.importorskip("boto3")


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteBackend]:
    opened = SQLiteBackend(tmp_path_factory.mktemp("http") / "cairn.db")
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def served(backend: SQLiteBackend) -> Iterator[RunningServer]:
    context = ApiContext.build(backend.stores(), embedder=HashingEmbedder(), clock=SystemClock())
    running = start(Api(context))
    yield running
    running.stop()


@pytest.fixture
def stores(backend: SQLiteBackend) -> Stores:
    return backend.stores()


@pytest.fixture
def client(served: RunningServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    point_clients_at(monkeypatch, served.url, tmp_path)
    return boto3.session.Session().client("bedrock-agentcore", endpoint_url=served.url)


@pytest.fixture
def memory_id(client: Any, served: RunningServer) -> str:
    control = boto3.session.Session().client("bedrock-agentcore-control", endpoint_url=served.url)
    created = control.create_memory(
        name=f"runtime_{uuid.uuid4().hex[:12]}",
        eventExpiryDuration=30,
        memoryStrategies=[
            {"semanticMemoryStrategy": {"name": "facts", "namespaces": ["/facts/{actorId}/"]}},
            {"customMemoryStrategy": {"name": "lessons", "namespaces": ["/lessons/{actorId}/"]}},
        ],
    )
    found: str = created["memory"]["id"]
    return found


def _session(client: Any, memory_id: str, actor: str = "tg:42", **options: Any) -> MemorySession:
    return MemorySession.agentcore(
        client,
        memory_id=memory_id,
        actor_id=actor,
        session_id="day-1",
        options=SessionOptions.model_validate(options),
    )


def _file(client: Any, memory_id: str, namespace: str, text: str) -> str:
    answer = client.batch_create_memory_records(
        memoryId=memory_id,
        records=[
            {
                "requestIdentifier": "r1",
                "namespaces": [namespace],
                "content": {"text": text},
                "timestamp": datetime.now(UTC),
            }
        ],
    )
    record_id: str = answer["successfulRecords"][0]["memoryRecordId"]
    return record_id


def test_turns_are_written_as_events_in_batches_and_on_close(
    client: Any, memory_id: str, stores: Stores
) -> None:
    scope = Scope(memory_id=memory_id, actor_id="tg:42")
    session = _session(client, memory_id, batch_size=2)
    session.add_turn("USER", "Hello there.")
    assert stores.events.list_events(scope, "day-1").items == ()
    session.add_turn("ASSISTANT", "Hi!")
    session.add_turn("USER", "Bye.")
    session.close()
    events = stores.events.list_events(scope, "day-1").items
    texts = [p.text for e in events for p in e.payload if isinstance(p, Conversational)]
    assert texts == ["Hello there.", "Hi!", "Bye."]


def test_a_group_turn_keeps_its_speaker_over_http(
    client: Any, memory_id: str, stores: Stores
) -> None:
    scope = Scope(memory_id=memory_id, actor_id="tg:-100777")
    session = _session(client, memory_id, actor="tg:-100777")
    session.add_turn("USER", "I am vegetarian.", speaker="tg:111")
    session.add_turn("ASSISTANT", "Noted.")
    session.close()
    events = stores.events.list_events(scope, "day-1").items
    assert [e.metadata for e in events] == [{SPEAKER_METADATA_KEY: "tg:111"}, {}]


def test_a_retried_append_with_the_same_token_is_stored_once(
    client: Any, memory_id: str, stores: Stores
) -> None:
    scope = Scope(memory_id=memory_id, actor_id="tg:42")
    store = AgentCoreSessionStore(client, call=call, clock=SystemClock())
    turn = EventInput(
        session_id="retry",
        event_timestamp=datetime.now(UTC),
        payload=(Conversational(role="USER", text="once"),),
    )
    store.append(scope, turn, token="a" * 32)
    store.append(scope, turn, token="a" * 32)  # a timed-out call, retried
    assert len(stores.events.list_events(scope, "retry").items) == 1


def test_a_lesson_learned_over_http_is_in_the_next_run_s_block_and_can_be_edited(
    client: Any, memory_id: str, stores: Stores
) -> None:
    session = _session(client, memory_id)
    learned = session.start_run("staging deploy").tools.call(
        "learn", {"lesson": "Run the database migrations before deploying to staging."}
    )
    assert learned.ok
    record_id = learned.content["record_id"]
    # Filed in the actor's own scope on the server, through the lessons template.
    scope = Scope(memory_id=memory_id, actor_id="tg:42")
    assert stores.records.get(scope, record_id).namespace == "/lessons/tg:42/"

    run = session.start_run("deploying to staging: database migrations?")
    line = next(line for line in run.block.splitlines() if record_id in line)
    assert "| untrusted |" in line  # the wire carries no provenance: shown as quoted data
    assert '"Run the database migrations before deploying to staging."' in line

    edited = run.tools.call(
        "memory_edit",
        {"action": "update", "record_id": record_id, "content": "Staging migrates on boot."},
    )
    assert edited.ok
    history = stores.records.history(scope, record_id)
    assert [v.content for v in history] == [
        "Run the database migrations before deploying to staging.",
        "Staging migrates on boot.",
    ]
    again = run.tools.call("learn", {"lesson": "Staging migrates on boot."})
    assert again.content["record_id"] == record_id
    assert again.content["confirmed_existing"] is True
    session.close()


def test_recall_keeps_only_records_above_the_relevance_bar_the_server_leaves_to_clients(
    client: Any, memory_id: str
) -> None:
    near = _file(client, memory_id, "/facts/tg:7/", "The user drinks green tea every morning")
    far = _file(client, memory_id, "/facts/tg:7/", "Every invoice is filed in March")
    retrieved = client.retrieve_memory_records(
        memoryId=memory_id,
        namespace="/facts/tg:7/",
        searchCriteria={"searchQuery": "green tea every morning", "topK": 10},
    )["memoryRecordSummaries"]

    # The bar is the session policy's floor, named here: the default (0.1) is low enough that
    # this test embedder's shared word "every" reaches it.
    bar = RecallPolicy(relevance_floor=0.3, weak_floor=0.2)
    session = _session(client, memory_id, actor="tg:7", policy=bar)
    block = session.start_run("green tea every morning").block

    assert {r["memoryRecordId"] for r in retrieved} == {near, far}  # the service's top K
    assert near in block
    assert far not in block


def test_another_actor_s_record_is_not_found_and_stays_untouched(
    client: Any, memory_id: str, stores: Stores
) -> None:
    theirs = _file(client, memory_id, "/facts/tg:7/", "tg:7 keeps the deploy key in a vault.")
    shared = _file(client, memory_id, "/notes/", "The deploy key lives in a vault.")
    run = _session(client, memory_id).start_run("deploy key vault")
    assert theirs not in run.block
    assert shared not in run.block
    found = run.tools.call("memory_recall", {"query": "deploy key vault"})
    assert found.content["results"] == []
    for record_id in (theirs, shared):
        for arguments in ({"action": "update", "content": "x"}, {"action": "forget"}):
            outcome = run.tools.call("memory_edit", {**arguments, "record_id": record_id})
            assert not outcome.ok
            assert "does not exist in this scope" in outcome.content["error"]
    head = stores.records.get(Scope(memory_id=memory_id, actor_id="tg:7"), theirs)
    assert (head.version, head.status) == (1, Status.ACTIVE)


def test_a_namespace_template_without_the_actor_is_refused(client: Any) -> None:
    with pytest.raises(ConfigurationError, match="actorId"):
        MemorySession.agentcore(
            client, memory_id="m", actor_id="tg:42", session_id="s", namespaces=("/notes/",)
        )


def test_an_unreachable_endpoint_degrades_recall_and_refuses_appends_as_retryable(
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
        client, memory_id="nowhere-memory-0001", actor_id="tg:42", session_id="s"
    )
    run = session.start_run("anything")
    assert run.block.startswith("## Recalled memories")  # the run goes on without recall
    turn = EventInput(
        session_id="s",
        event_timestamp=datetime.now(UTC),
        payload=(Conversational(role="USER", text="kept"),),
    )
    store = AgentCoreSessionStore(client, call=call, clock=SystemClock())
    with pytest.raises(StoreUnavailableError, match="unreachable") as raised:
        store.append(
            Scope(memory_id="nowhere-memory-0001", actor_id="tg:42"), turn, token=uuid.uuid4().hex
        )
    assert raised.value.retryable


def test_over_http_memory_recall_searches_records_and_refuses_turns_with_what_to_do(
    client: Any, memory_id: str
) -> None:
    record_id = _file(client, memory_id, "/facts/tg:42/", "The user keeps bees on the roof.")
    session = _session(client, memory_id)
    records = session.recall("bees on the roof", channels=("records",))
    assert [(h.kind, h.ref) for h in records.hits] == [("records", record_id)]
    run = session.start_run("bees")
    refused = run.tools.call(
        MEMORY_RECALL, {"query": "bees on the roof", "channels": ["records", "turns"]}
    )
    assert not refused.ok
    assert "cannot be recalled over the AgentCore API" in refused.content["error"]
    assert "channels ['records']" in refused.content["error"]
