"""Erasing an actor on AWS (moto): its staged payloads leave S3, its rollouts the index, and a
notice still queued for it afterwards finds nothing to extract."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.staging_keys import scope_prefix
from tests.pipeline.aws import Deployment, LambdaRuntime

ALICE = Scope(memory_id="support-AbCdEf1234", actor_id="tg:1")
BOB = Scope(memory_id="support-AbCdEf1234", actor_id="tg:2")
SECRET = {ALICE: "My passport number is X1234567.", BOB: "My locker code is 8080."}
POLICY = policy_for(embedded_memory(ALICE.memory_id))


def converse(pipeline: Any, scope: Scope, clock: FixedClock) -> None:
    for i in range(6):
        text = SECRET[scope] if i == 2 else f"turn {i}"
        pipeline.append(
            scope,
            EventInput(
                session_id="s1",
                event_timestamp=clock.now(),
                payload=(Conversational(role=Role.USER, text=text),),
            ),
            POLICY,
        )
        clock.advance(timedelta(seconds=1))


def staged(session: Any, deployment: Deployment) -> dict[str, bytes]:
    s3 = session.client("s3")
    listed = s3.list_objects_v2(Bucket=deployment.bucket).get("Contents", [])
    return {
        o["Key"]: s3.get_object(Bucket=deployment.bucket, Key=o["Key"])["Body"].read()
        for o in listed
    }


def test_an_erased_actor_leaves_no_staged_payload_and_its_queued_notice_writes_nothing(
    deployment: Deployment, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    for scope in (ALICE, BOB):
        converse(wiring.pipeline(), scope, clock)
    before = staged(session, deployment)
    assert sum(SECRET[ALICE].encode() in body for body in before.values()) == 1

    erased = erase_actor(wiring.stores(), ALICE, staging=wiring.staging())

    assert (erased.payloads, erased.events, erased.rollouts) == (1, 6, 2)  # counters + rollout
    after = staged(session, deployment)
    assert not any(key.startswith(scope_prefix(ALICE)) for key in after)
    assert [SECRET[BOB].encode() in body for body in after.values()] == [True]
    tables = [
        item
        for table in (deployment.items_table, deployment.events_table)
        for item in session.client("dynamodb").scan(TableName=table)["Items"]
    ]
    assert SECRET[ALICE] not in json.dumps(tables)
    assert extraction_lambda.poll() == []  # both notices acknowledged: Alice's finds nothing
    stores = wiring.stores()
    assert stores.records.list_records(ALICE).items == ()
    assert stores.records.list_records(BOB).items != ()
