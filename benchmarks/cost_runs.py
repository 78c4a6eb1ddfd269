"""The instrumented runs: every costed operation, driven through the real library and handlers
against the deployment's resources in moto, with every AWS request counted (``cost_meter``).

On the bench (``cost_bench``), per scope size (records the actor already holds): one rollout to
warm the session, the scope seeded, then a steady-state rollout measured (appends, release,
consumption by the extraction function), a recall in the agent's process,
RetrieveMemoryRecords, six CreateEvents and BatchCreateMemoryRecords through the API function,
and a record write; the scheduled jobs function before the actor, after all that, and with
nothing new, every memory's jobs caught up before each but the busy one (``cost_jobs``). Each
size has a memory of its own. Once: the jobs function with nothing stored, and the sweep with
nothing to do and with one idle session to claim.
Last, what the tables hold, per thing kept (``cost_storage``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.cost_bench import Bench, Operation, SeedingClient
from benchmarks.cost_jobs import catch_up, measure_jobs, with_rest
from benchmarks.cost_scenario import seed_records
from benchmarks.cost_storage import StorageProfile, profile_storage
from cairn.changes import Create, NewRecord, Vector
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallQuery, recall
from cairn.store.dynamodb import DynamoDBBackend

RECALL_QUERY = "What do you remember about my office, my preferences and my plans?"


@dataclass
class Measurements:
    """Operations by scope size (records the actor holds), the scope-free ones, storage."""

    by_size: dict[int, dict[str, Operation]]
    shared: dict[str, Operation]
    storage: StorageProfile
    repeats: int
    api_counts_turns: bool


def run_measurements(sizes: tuple[int, ...], repeats: int) -> Measurements:
    """Every operation at every scope size, on moto; see the module docstring."""
    import boto3
    from moto import mock_aws

    saved = dict(os.environ)
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    try:
        with mock_aws():
            session = boto3.session.Session(**credentials, region_name="us-east-1")
            peek = boto3.session.Session(**credentials, region_name="us-east-1").client("dynamodb")
            bench = Bench(session, peek, repeats)
            empty = measure_jobs(bench, "jobs-empty", "scheduled jobs, nothing stored", repeats)
            with bench.scratch():
                bench.rollout(Scope(memory_id=bench.memory_id, actor_id="tg:template"), 0, "t")
            templates = bench.stores.records.list_records(
                Scope(memory_id=bench.memory_id, actor_id="tg:template")
            ).items
            by_size = {size: _per_scope(bench, size, templates) for size in sizes}
            shared = {"jobs-empty": empty, **_sweeps(bench)}
            storage = profile_storage(bench.peek, bench.meter, bench.deployment)
            counts = bench.api_counts_turns
            bench.wiring.configure()
            bench.api_handler.api.cache_clear()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return Measurements(
        by_size=by_size, shared=shared, storage=storage, repeats=repeats, api_counts_turns=counts
    )


def _per_scope(bench: Bench, size: int, templates: Any) -> dict[str, Operation]:
    with bench.scratch():  # a memory of its own: the jobs' bounds are per memory
        bench.use_memory(f"costModel{size}")
    scope = Scope(memory_id=bench.memory_id, actor_id=f"tg:{size}")
    session_id = f"chat-{size}"
    found: dict[str, Operation] = {}
    catch_up(bench)  # no memory has a backlog: the runs measure holding an actor, no model call
    found["jobs-before"] = measure_jobs(bench, "jobs-before", "scheduled jobs, before the actor")
    with bench.scratch():  # first: with few items in the table, moto's transactions are fast
        bench.rollout(scope, 1, session_id)
    seeding = DynamoDBBackend(
        SeedingClient(bench.peek),
        items_table=bench.deployment.items_table,
        events_table=bench.deployment.events_table,
        clock=bench.clock,
    )
    seed_records(scope, size, templates, stores=seeding.stores(), embedder=bench.embedder)
    catch_up(bench)  # the seeded records are an old memory's: paired long ago
    turns = bench.turns(2, session_id)
    claims: list[Any] = []

    def append_all() -> None:
        rollouts = bench.stores.rollouts
        assert rollouts is not None
        claims[:] = [rollouts.append_counted(scope, t, policy=bench.policy).claim for t in turns]

    found["append"] = _once(bench, "append", "6 turns appended and counted", append_all)
    claim = claims[-1]
    assert claim is not None, "the sixth turn must fire the built-in message trigger"
    found["release"] = _once(
        bench,
        "release",
        "release: stage the payload, announce it",
        lambda: bench.pipeline.release(claim),
    )
    found["consume"] = _once(bench, "consume", "extraction function consumes it", bench.consume)
    if bench.consolidates():
        found["consolidate"] = _once(
            bench, "consolidate", "consolidation function handed the same notice", bench.consolidate
        )
    for operation in _reads(bench, scope, size).values():
        found[operation.key] = operation
    for operation in _writes(bench, scope, size).values():
        found[operation.key] = operation
    busy = measure_jobs(bench, "jobs-busy", "scheduled jobs, after the traffic")
    found["jobs-busy"] = with_rest(busy, catch_up(bench))  # what its bounds left is its traffic's
    found["jobs-idle"] = measure_jobs(
        bench, "jobs-idle", "scheduled jobs, nothing new", repeats=bench.repeats
    )
    return found


def _once(bench: Bench, key: str, title: str, action: Callable[[], object]) -> Operation:
    repeats, bench.repeats = bench.repeats, 1
    try:
        return bench.measure(key, title, action)
    finally:
        bench.repeats = repeats


def _reads(bench: Bench, scope: Scope, size: int) -> dict[str, Operation]:
    def library_recall() -> None:
        query = RecallQuery(text=RECALL_QUERY, top_k=8)
        recall(scope, query, stores=bench.stores, embedder=bench.embedder, clock=bench.clock)

    body = {
        "namespace": f"/facts/{scope.actor_id}/",
        "searchCriteria": {"searchQuery": RECALL_QUERY, "topK": 8},
    }
    path = f"/memories/{bench.memory_id}/retrieve"
    return {
        "recall": bench.measure("recall", "recall in the agent's process", library_recall),
        "retrieve": bench.measure(
            "retrieve",
            "RetrieveMemoryRecords through the API",
            lambda: bench.api("POST", path, body, "RetrieveMemoryRecords"),
        ),
    }


def _writes(bench: Bench, scope: Scope, size: int) -> dict[str, Operation]:
    memory, text = bench.memory_id, "I keep my spare keys with the neighbour at number 12."
    at = int(bench.clock.now().timestamp())
    batch = {
        "records": [
            {
                "requestIdentifier": "r0",
                "namespaces": [f"/facts/{scope.actor_id}/"],
                "content": {"text": text},
                "timestamp": at,
            }
        ],
        "clientToken": str(uuid.uuid4()),
    }

    def create_events() -> None:
        for turn in bench.turns(size + 7, f"api-chat-{size}"):
            body = {
                "actorId": scope.actor_id,
                "sessionId": turn.session_id,
                "eventTimestamp": int(turn.event_timestamp.timestamp()),
                "payload": [
                    {"conversational": {"content": {"text": p.text}, "role": p.role.value}}
                    for p in turn.payload
                ],
                "clientToken": str(uuid.uuid4()),
            }
            bench.api("POST", f"/memories/{memory}/events", body, "CreateEvent")

    def remember() -> None:
        (values,) = bench.embedder.embed([text])
        vector = Vector(embedder=bench.embedder.identity, values=tuple(float(x) for x in values))
        record = NewRecord(
            namespace=f"/facts/{scope.actor_id}/",
            content=text,
            sources=(Source(kind=SourceKind.USER),),
            vector=vector,
        )
        bench.stores.records.apply(scope, [Create(record=record)])

    found = {
        "create-event": _once(
            bench, "create-event", "6 turns through CreateEvent (the API)", create_events
        ),
    }
    with bench.scratch():
        bench.drain()
    found["record-write"] = _once(
        bench, "record-write", "one record written in the caller's process", remember
    )
    found["batch-create"] = _once(
        bench,
        "batch-create",
        "BatchCreateMemoryRecords, one record (the API)",
        lambda: bench.api(
            "POST", f"/memories/{memory}/memoryRecords/batchCreate", batch, "BatchCreate"
        ),
    )
    return found


def _sweeps(bench: Bench) -> dict[str, Operation]:
    scope = Scope(memory_id=bench.memory_id, actor_id="tg:idle")
    sweep = bench.runner.wrap("sweep", bench.sweep_handler)
    with bench.scratch():
        bench.clock.advance(seconds=601)  # whatever earlier runs left idle is claimed now
        sweep({}, None)
        bench.drain()
        for turn in bench.turns(3, "idle-chat")[:4]:
            bench.pipeline.append(scope, turn, bench.policy)
    bench.clock.advance(seconds=601)  # past the built-in 600 s idle timeout
    claimed = _once(
        bench, "sweep-claim", "sweep claims and releases one idle session", lambda: sweep({}, None)
    )
    with bench.scratch():
        bench.drain()
    idle = bench.measure("sweep-idle", "sweep with nothing to do", lambda: sweep({}, None))
    return {"sweep-claim": claimed, "sweep-idle": idle}
