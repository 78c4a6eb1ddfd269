"""The scheduled jobs Lambda on moto: every configured memory's access counts and links, its
runs logged, through the composition root a deployed function uses."""

from __future__ import annotations

import importlib
from typing import Any

from cairn.changes import Create, NewRecord, Vector
from cairn.embed.hashing import HashingEmbedder
from cairn.jobs import JobName, JobSwitches
from cairn.models import JournalEntry, Scope, SelectedEntry, Source, SourceKind, Trust
from tests.pipeline.aws import Deployment, LambdaContext
from tests.pipeline.test_api_lambda import api_lambda, create_memory

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
