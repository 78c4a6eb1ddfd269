"""Extraction through the API (router in-process, SQLite, the worker driven by ``run_once``).

CreateEvent and IngestData go through the pipeline's counted append; a failed rollout is a
failed extraction job that ListMemoryExtractionJobs lists and StartMemoryExtractionJob runs
again; DeleteMemory erases the rollouts and their staged payloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.errors import ModelRejectedError
from cairn.extract.triggers import BUILT_IN_TRIGGERS
from cairn.local import offline_model
from cairn.local.api import EmbeddedApi, serve_embedded
from cairn.model_request import ModelRequest, ModelResponse
from cairn.models import Scope
from cairn.rollout.index import RolloutState
from cairn.store.sqlite import SQLiteBackend
from tests.unit.api_harness import Caller, create_memory, segment

T0 = 1_767_258_000
ACTOR = "user/a1"
TURNS = (
    ("USER", "Hi there."),
    ("ASSISTANT", "Hello!"),
    ("USER", "My office is in Porto."),
    ("ASSISTANT", "Noted."),
    ("USER", "I prefer window seats."),
    ("ASSISTANT", "Got it."),
)


class Flaky:
    """The heuristic model, refusing every request while ``refusing`` is set."""

    def __init__(self) -> None:
        self.refusing = False
        self.inner = offline_model()

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self.refusing:
            raise ModelRejectedError("the provider refused the request (a test's refusal)")
        return self.inner.complete(request)


@pytest.fixture
def model() -> Flaky:
    return Flaky()


@pytest.fixture
def served(tmp_path: Path, model: Flaky) -> Iterator[EmbeddedApi]:
    clock = FixedClock()
    path = tmp_path / "cairn.db"
    embedded = serve_embedded(
        SQLiteBackend(path, clock).stores(),
        path,
        embedder=HashingEmbedder(),
        model=model,
        clock=clock,
        start_worker=False,
        # The 6-message trigger the Lambda extractor runs under: three exchanges, one rollout.
        built_in_triggers=BUILT_IN_TRIGGERS,
    )
    yield embedded
    embedded.close()


@pytest.fixture
def call(served: EmbeddedApi) -> Caller:
    return Caller(served.api)


def post_turns(call: Caller, memory_id: str, session: str = "s1", **extra: Any) -> None:
    for offset, (role, text) in enumerate(TURNS):
        body = {
            "actorId": ACTOR,
            "sessionId": session,
            "eventTimestamp": T0 + offset,
            "payload": [{"conversational": {"content": {"text": text}, "role": role}}],
            **extra,
        }
        reply = call("POST", f"/memories/{memory_id}/events", body)
        assert reply.status == 201, reply.body


def texts(call: Caller, memory_id: str) -> list[str]:
    listed = call("POST", f"/memories/{memory_id}/memoryRecords", {"namespace": "/"})
    return sorted(r["content"]["text"] for r in listed.body["memoryRecordSummaries"])


def jobs(call: Caller, memory_id: str, **body: Any) -> list[dict[str, Any]]:
    reply = call("POST", f"/memories/{memory_id}/extractionJobs", body)
    assert reply.status == 200, reply.body
    found: list[dict[str, Any]] = reply.body["jobs"]
    return found


def test_posted_turns_fire_the_trigger_and_the_worker_files_records(
    call: Caller, served: EmbeddedApi
) -> None:
    memory_id = create_memory(call)["id"]

    post_turns(call, memory_id)
    done = served.extraction.worker.run_once()

    assert [d.status for d in done] == ["consumed"]
    assert texts(call, memory_id) == ["The user's office is in Porto."]
    found = call(
        "POST",
        f"/memories/{memory_id}/retrieve",
        {"namespace": f"/facts/{ACTOR}/", "searchCriteria": {"searchQuery": "office Porto"}},
    )
    assert [r["content"]["text"] for r in found.body["memoryRecordSummaries"]] == [
        "The user's office is in Porto."
    ]


def test_extraction_mode_skip_stores_the_event_uncounted(call: Caller, served: EmbeddedApi) -> None:
    memory_id = create_memory(call)["id"]

    post_turns(call, memory_id, extractionMode="SKIP")

    assert served.extraction.worker.run_once() == []
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    assert served.extraction.pipeline.rollouts.counters(scope, "s1") is None
    listed = call("POST", f"/memories/{memory_id}/actor/{segment(ACTOR)}/sessions/s1", {})
    assert len(listed.body["events"]) == len(TURNS)


def test_ingested_data_is_counted_like_an_event(call: Caller, served: EmbeddedApi) -> None:
    memory_id = create_memory(call)["id"]
    payload = [
        {"conversational": {"content": {"text": text}, "role": role}} for role, text in TURNS[:3]
    ]

    reply = call(
        "POST",
        f"/memories/{memory_id}/ingest",
        {
            "actorId": ACTOR,
            "sessionId": "s1",
            "contentTimestamp": T0,
            "source": {"inline": {"payload": payload}},
        },
    )

    assert reply.status == 202, reply.body
    counters = served.extraction.pipeline.rollouts.counters(
        Scope(memory_id=memory_id, actor_id=ACTOR), "s1"
    )
    assert counters is not None
    assert counters.messages == 3


def test_a_failed_rollout_is_listed_as_a_failed_job_and_starting_it_files_the_records(
    call: Caller, served: EmbeddedApi, model: Flaky
) -> None:
    memory = create_memory(call)
    memory_id, strategy_id = memory["id"], memory["strategies"][0]["strategyId"]
    model.refusing = True
    post_turns(call, memory_id)
    (failed,) = served.extraction.worker.run_once()
    assert failed.status == "failed"

    (job,) = jobs(call, memory_id)
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    events = served.extraction.stores.events.list_events(scope, "s1").items
    assert job == {
        "jobID": failed.rollout_id,
        "messages": {"messagesList": [{"eventId": e.event_id, "messageIndex": 0} for e in events]},
        "status": "FAILED",
        "failureReason": failed.reason,
        "sessionId": "s1",
        "actorId": ACTOR,
        "strategyId": strategy_id,
    }
    assert "ModelRejectedError" in job["failureReason"]
    assert jobs(call, memory_id, filter={"actorId": "someone-else"}) == []
    assert jobs(call, memory_id, filter={"sessionId": "s2"}) == []
    assert len(jobs(call, memory_id, filter={"strategyId": strategy_id, "status": "FAILED"})) == 1

    model.refusing = False
    started = call(
        "POST",
        f"/memories/{memory_id}/extractionJobs/start",
        {"extractionJob": {"jobId": failed.rollout_id}},
    )
    assert started.body == {"jobId": failed.rollout_id}
    (retried,) = served.extraction.worker.run_once()

    assert retried.status == "consumed"
    assert texts(call, memory_id) == ["The user's office is in Porto."]
    assert jobs(call, memory_id) == []
    rollout = served.extraction.pipeline.rollouts.get(scope, failed.rollout_id)
    assert rollout.state is RolloutState.CONSUMED
    again = call(
        "POST",
        f"/memories/{memory_id}/extractionJobs/start",
        {"extractionJob": {"jobId": failed.rollout_id}},
    )
    assert (again.status, again.error_type) == (404, "ResourceNotFoundException")


def test_starting_an_unknown_job_is_not_found(call: Caller) -> None:
    memory_id = create_memory(call)["id"]

    reply = call(
        "POST",
        f"/memories/{memory_id}/extractionJobs/start",
        {"extractionJob": {"jobId": "ro-20260101T000000000000-000000000000"}},
    )

    assert (reply.status, reply.error_type) == (404, "ResourceNotFoundException")


def test_jobs_are_paged(call: Caller, served: EmbeddedApi, model: Flaky) -> None:
    memory_id = create_memory(call)["id"]
    model.refusing = True
    for session in ("s1", "s2", "s3"):
        post_turns(call, memory_id, session)
    served.extraction.worker.run_once()

    first = call("POST", f"/memories/{memory_id}/extractionJobs", {"maxResults": 2})
    second = call(
        "POST",
        f"/memories/{memory_id}/extractionJobs",
        {"maxResults": 2, "nextToken": first.body["nextToken"]},
    )

    listed = [j["sessionId"] for j in (*first.body["jobs"], *second.body["jobs"])]
    assert sorted(listed) == ["s1", "s2", "s3"]
    assert "nextToken" not in second.body


def test_delete_memory_erases_rollouts_and_staged_payloads(
    call: Caller, served: EmbeddedApi, model: Flaky
) -> None:
    memory_id = create_memory(call)["id"]
    other_id = create_memory(call, name="other")["id"]
    model.refusing = True  # failed rollouts keep their payloads staged
    post_turns(call, memory_id)
    post_turns(call, other_id)
    served.extraction.worker.run_once()
    assert _staged_containing(served, b"Porto") == 2

    deleted = call("DELETE", f"/memories/{memory_id}/delete")

    assert deleted.status == 202, deleted.body
    assert _staged_containing(served, b"Porto") == 1  # the other memory's
    assert (
        served.extraction.pipeline.rollouts.list_pending(Scope(memory_id=memory_id, actor_id=ACTOR))
        == ()
    )
    assert len(jobs(call, other_id)) == 1


def _staged_containing(served: EmbeddedApi, text: bytes) -> int:
    files = [path for path in served.staging_root.rglob("*") if path.is_file()]
    return sum(text in path.read_bytes() for path in files)
