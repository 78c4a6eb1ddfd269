"""The scheduled jobs Lambda on moto: every configured memory's rollup, access counts and links,
its runs logged, through the composition root a deployed function uses."""

from __future__ import annotations

import importlib
from typing import Any

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.jobs import JobName, JobSwitches
from cairn.models import JournalEntry, Scope, SelectedEntry, Source, SourceKind, Trust
from tests.pipeline.aws import CountdownContext, Deployment, LambdaContext
from tests.pipeline.test_api_lambda import ACTOR, T0, api_lambda, create_memory

__all__ = ["api_lambda"]  # the fixture, used by name


def test_a_scheduled_run_counts_links_and_logs_every_configured_memory(
    api_lambda: Any, deployment: Deployment, embedder: HashingEmbedder
) -> None:
    from functions._common import wiring

    memory_id = create_memory(api_lambda, "withJobs")
    other_id = create_memory(api_lambda, "switchedOff")
    stores = wiring.stores()
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id=other_id).switched(JobName.LINK, False))
    scope = Scope(memory_id=memory_id, actor_id="tg:1")
    texts = ["The hive stands in the orchard", "The hive stands in the orchard now"]
    written = []
    for text, row in zip(texts, embedder.embed(texts), strict=True):
        record = NewRecord(
            namespace="/facts/tg:1/",
            content=text,
            sources=(Source(kind=SourceKind.USER),),
            entities=("hive",),
            vector=Vector(embedder=embedder.identity, values=tuple(float(v) for v in row)),
        )
        written += stores.records.apply(scope, [Create(record=record)])
    stores.journal.put(
        JournalEntry(
            journal_id="jr-1",
            memory_id=memory_id,
            actor_id="tg:1",
            created_at=wiring.clock().now(),
            query="hive",
            selected=tuple(
                SelectedEntry(
                    record_id=r.record_id, version=1, content_digest=r.content_digest, score=0.8
                )
                for r in written
            ),
            block_digest="0" * 64,
        )
    )
    handler = importlib.import_module("functions.jobs.handler").lambda_handler

    report = handler({}, LambdaContext(function_name="cairn-jobs"))
    again = handler({}, LambdaContext(function_name="cairn-jobs"))

    assert report["memories"] == 2
    assert stores.access is not None
    assert stores.access.counts(scope) == {r.record_id: 1 for r in written}
    assert stores.links is not None
    (link,) = stores.links.links_of(scope, written[0].record_id)
    assert link.trust is Trust.UNTRUSTED
    assert again["changed"] == 0  # nothing counted twice, nothing linked twice
    assert [r.outcome for r in stores.jobs.runs(other_id, JobName.LINK)] == ["skipped"] * 2
    assert len(stores.jobs.runs(memory_id, JobName.ACCESS)) == 2


def talk(send: Any, memory_id: str, turns: int) -> None:
    """``turns`` turns of one conversation, appended through the API function."""
    for i in range(turns):
        posted = send(
            "POST",
            f"/memories/{memory_id}/events",
            {
                "actorId": ACTOR,
                "sessionId": "evening",
                "eventTimestamp": T0 + 60 * i,
                "payload": [
                    {"conversational": {"content": {"text": f"turn {i}: bees"}, "role": "USER"}}
                ],
            },
        )
        assert posted["_status"] == 201, posted


def test_a_scheduled_run_rolls_a_conversation_up_and_a_switched_off_memory_is_skipped(
    api_lambda: Any, deployment: Deployment
) -> None:
    from functions._common import wiring

    memory_id = create_memory(api_lambda, "rolledUp")
    other_id = create_memory(api_lambda, "notRolledUp")
    stores = wiring.stores()
    assert stores.jobs is not None
    assert stores.chunks is not None
    stores.jobs.set_switches(JobSwitches(memory_id=other_id).switched(JobName.ROLLUP, False))
    talk(api_lambda, memory_id, 25)
    talk(api_lambda, other_id, 25)
    handler = importlib.import_module("functions.jobs.handler").lambda_handler

    handler({}, LambdaContext(function_name="cairn-jobs"))

    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    chunks = stores.chunks.list_chunks(scope, "evening", level=1)
    assert [(c.from_seq, c.to_seq) for c in chunks] == [(1, 10), (11, 20)]  # 21-25 wait
    (run,) = stores.jobs.runs(memory_id, JobName.ROLLUP)
    assert (run.outcome, run.actors, run.changed) == ("done", 1, 2)
    off = Scope(memory_id=other_id, actor_id=ACTOR)
    assert stores.chunks.chunk_sessions(off) == ()
    (skipped,) = stores.jobs.runs(other_id, JobName.ROLLUP)
    assert skipped.outcome == "skipped"
    assert skipped.reasons == ("the rollup is switched off for this memory",)


def test_a_run_left_too_little_time_starts_no_session_and_says_the_next_run_continues(
    api_lambda: Any, deployment: Deployment, clock: FixedClock
) -> None:
    from functions._common import wiring

    jobs = importlib.import_module("functions.jobs.handler")
    memory_id = create_memory(api_lambda, "lateRun")
    talk(api_lambda, memory_id, 10)
    stores = wiring.stores()
    assert stores.jobs is not None
    assert stores.chunks is not None
    short = int(jobs.ROLLUP_RESERVE.total_seconds() * 1000) - 1

    jobs.lambda_handler({}, CountdownContext(function_name="cairn-jobs", remaining=[short]))
    clock.advance(minutes=15)
    jobs.lambda_handler({}, LambdaContext(function_name="cairn-jobs"))

    on_time, late = stores.jobs.runs(memory_id, JobName.ROLLUP)  # newest first
    assert (late.outcome, late.changed) == ("partial", 0)
    assert late.reasons == ("1 session(s): the run's time ran out; the next run continues",)
    assert (on_time.outcome, on_time.changed) == ("done", 1)
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    assert len(stores.chunks.list_chunks(scope, "evening", level=1)) == 1


def test_a_scheduled_run_reflects_and_flags_only_where_reflection_is_switched_on(
    api_lambda: Any, deployment: Deployment, embedder: HashingEmbedder, clock: FixedClock
) -> None:
    from cairn.recall.render import is_contested
    from cairn.reflection_records import REFLECTION_STRATEGY
    from functions._common import wiring

    on_id = create_memory(api_lambda, "reflects")
    off_id = create_memory(api_lambda, "reflectsNot")
    stores = wiring.stores()
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id=on_id).switched(JobName.REFLECTION, True))
    texts = ["The user's office is in Lisbon.", "The user's office is in Porto."]
    for memory_id in (on_id, off_id):
        scope = Scope(memory_id=memory_id, actor_id="tg:1")
        for text, row in zip(texts, embedder.embed(texts), strict=True):
            record = NewRecord(
                namespace="/facts/tg:1/",
                content=text,
                sources=(Source(kind=SourceKind.USER),),
                vector=Vector(embedder=embedder.identity, values=tuple(float(v) for v in row)),
            )
            stores.records.apply(scope, [Create(record=record)])
    handler = importlib.import_module("functions.jobs.handler").lambda_handler

    handler({}, LambdaContext(function_name="cairn-jobs"))
    clock.advance(minutes=15)
    handler({}, LambdaContext(function_name="cairn-jobs"))

    on = stores.records.list_records(Scope(memory_id=on_id, actor_id="tg:1"), limit=10).items
    (made,) = [r for r in on if r.strategy == REFLECTION_STRATEGY]
    assert made.trust is Trust.UNTRUSTED
    assert made.content.startswith("2 memories concern office: ")
    got = api_lambda("GET", f"/memories/{on_id}/memoryRecord/{made.record_id}", stage="prod")
    assert got["memoryRecord"]["content"]["text"] == made.content  # found by id over the API
    stated = [r for r in on if r.strategy != REFLECTION_STRATEGY]
    assert all(is_contested(r) and r.trust is Trust.TRUSTED for r in stated)
    second, first = stores.jobs.runs(on_id, JobName.REFLECTION)  # newest first
    assert (first.outcome, first.changed, second.changed) == ("done", 2, 0)
    off = stores.records.list_records(Scope(memory_id=off_id, actor_id="tg:1"), limit=10).items
    assert [r.version for r in off] == [1, 1]
    assert [r.outcome for r in stores.jobs.runs(off_id, JobName.REFLECTION)] == ["skipped"] * 2


def test_reflection_starts_no_model_call_into_the_rollups_reserve(
    api_lambda: Any, deployment: Deployment, embedder: HashingEmbedder
) -> None:
    from cairn.reflection_records import REFLECTION_STRATEGY
    from functions._common import wiring

    jobs = importlib.import_module("functions.jobs.handler")
    memory_id = create_memory(api_lambda, "reflectsLate")
    stores = wiring.stores()
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id=memory_id).switched(JobName.REFLECTION, True))
    scope = Scope(memory_id=memory_id, actor_id="tg:1")
    texts = ["The hive stands in the orchard", "The hive stands in the orchard now"]
    for text, row in zip(texts, embedder.embed(texts), strict=True):
        record = NewRecord(
            namespace="/facts/tg:1/",
            content=text,
            sources=(Source(kind=SourceKind.USER),),
            entities=("hive",),
            vector=Vector(embedder=embedder.identity, values=tuple(float(v) for v in row)),
        )
        stores.records.apply(scope, [Create(record=record)])
    short = int((jobs.ROLLUP_RESERVE + jobs.MODEL_CALL).total_seconds() * 1000) - 1

    jobs.lambda_handler({}, CountdownContext(function_name="cairn-jobs", remaining=[short]))

    (run,) = stores.jobs.runs(memory_id, JobName.REFLECTION)
    assert (run.outcome, run.changed) == ("partial", 0)
    assert run.reasons == ("1× actor(s) left for the next run: the run's bound was reached",)
    heads = stores.records.list_records(scope, limit=10).items
    assert not [r for r in heads if r.strategy == REFLECTION_STRATEGY]
