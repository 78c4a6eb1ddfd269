"""The whole extraction path, on moto and embedded: events appended through the library, a
trigger fires, the payload is staged, the notice is delivered, the extractor runs, and what
the user said is there to recall, with no explicit ``remember``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from cairn.aws.sns_notifier import message_group
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.local.system import EmbeddedExtraction
from cairn.recall import RecallQuery, recall
from cairn.rollout.index import RolloutState
from cairn.rollout.payload import decode_notice, decode_payload, text_sha256
from cairn.rollout.staging_keys import staging_key
from tests.pipeline.aws import Deployment, LambdaContext, LambdaRuntime
from tests.pipeline.scenario import SCOPE, TURNS, assert_remembered, live_records, turn

POLICY = policy_for(embedded_memory(SCOPE.memory_id))


def _recalled(stores: Any, embedder: HashingEmbedder, clock: FixedClock, question: str) -> str:
    found = recall(SCOPE, RecallQuery(text=question), stores=stores, embedder=embedder, clock=clock)
    return found.block


def test_the_aws_path_turns_conversation_into_recallable_records(
    deployment: Deployment,
    session: Any,
    extraction_lambda: LambdaRuntime,
    clock: FixedClock,
    embedder: HashingEmbedder,
) -> None:
    from functions._common import wiring

    pipeline = wiring.pipeline()
    appended = [pipeline.append(SCOPE, turn(role, text, clock), POLICY) for role, text in TURNS]

    claims = [a.claim for a in appended if a.claim is not None]
    assert len(claims) == 1
    claim = claims[0]
    rollout = wiring.stores().rollouts.get(SCOPE, claim.rollout_id)  # type: ignore[union-attr]
    assert rollout.state is RolloutState.ANNOUNCED

    key = staging_key(SCOPE, claim.rollout_id)
    body = session.client("s3").get_object(Bucket=deployment.bucket, Key=key)["Body"].read()
    payload = decode_payload(body)
    assert [m.event_id for m in payload.events] == [a.event.event_id for a in appended]
    assert [m.sha256 for m in payload.events] == [text_sha256(text) for _, text in TURNS]

    messages = extraction_lambda.receive()
    assert len(messages) == 1
    notice = decode_notice(messages[0]["Body"])
    assert (notice.rollout_id, notice.staging_key) == (claim.rollout_id, key)
    attributes = messages[0]["Attributes"]
    assert attributes["MessageGroupId"] == message_group(SCOPE)
    assert attributes["MessageDeduplicationId"] == claim.rollout_id
    assert SCOPE.actor_id not in attributes["MessageGroupId"]

    assert extraction_lambda.deliver(messages) == []

    stores = wiring.stores()
    assert_remembered(live_records(stores), claim.rollout_id)
    assert "oat milk" in _recalled(stores, embedder, clock, "What milk does the user like?")
    consumed = stores.rollouts.get(SCOPE, claim.rollout_id)  # type: ignore[union-attr]
    assert consumed.state is RolloutState.CONSUMED
    listed = session.client("s3").list_objects_v2(Bucket=deployment.bucket).get("Contents", [])
    # The consumed payload (conversation text) is gone; what the recall left is the scope's
    # recall index object (its records, derived, rebuildable).
    assert [o["Key"].split("/")[0] for o in listed] == ["recall-index"]
    assert extraction_lambda.receive() == []


def test_an_idle_session_is_released_by_the_scheduled_sweep(
    deployment: Deployment,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    pipeline = wiring.pipeline()
    for role, text in TURNS[:3]:
        assert pipeline.append(SCOPE, turn(role, text, clock), POLICY).claim is None

    clock.advance(timedelta(seconds=599))
    assert sweep_lambda({"source": "aws.events"}, LambdaContext())["idle_claimed"] == 0
    clock.advance(timedelta(seconds=1))
    report = sweep_lambda({"source": "aws.events"}, LambdaContext())

    assert report["idle_claimed"] == 1
    assert report["released"] == 1
    assert extraction_lambda.poll() == []
    assert wiring.stores().rollouts.list_pending(SCOPE) == ()  # type: ignore[union-attr]
    contents = " ".join(r.content for r in live_records(wiring.stores()))
    assert "oat milk" in contents
    assert "Lisbon" not in contents  # never said in the released turns


def test_the_embedded_path_turns_conversation_into_recallable_records(
    embedded: EmbeddedExtraction, clock: FixedClock, embedder: HashingEmbedder
) -> None:
    appended = [embedded.append(SCOPE, turn(role, text, clock)) for role, text in TURNS]
    (claim,) = (a.claim for a in appended if a.claim is not None)

    handled = embedded.worker.run_once()

    assert [(c.rollout_id, c.status) for c in handled] == [(claim.rollout_id, "consumed")]
    assert_remembered(live_records(embedded.stores), claim.rollout_id)
    assert "oat milk" in _recalled(
        embedded.stores, embedder, clock, "What milk does the user like?"
    )
    assert embedded.stores.rollouts.list_pending(SCOPE) == ()  # type: ignore[union-attr]


def test_the_embedded_timer_releases_an_idle_session(
    embedded: EmbeddedExtraction, clock: FixedClock
) -> None:
    for role, text in TURNS[:3]:
        embedded.append(SCOPE, turn(role, text, clock))
    assert embedded.worker.run_once() == []

    clock.advance(timedelta(seconds=600))
    handled = embedded.worker.run_once()

    assert [c.status for c in handled] == ["consumed"]
    assert "oat milk" in " ".join(r.content for r in live_records(embedded.stores))
