"""Quarantine on the deployed recall index (DynamoDB on moto, index objects in moto S3): a change
to the list reaches a warm reader and a cold one at their next recall, and a recall still costs
the one generation read (the list travels with the scope's rows, in process and in the object)."""

from __future__ import annotations

from cairn.models import Trust
from cairn.quarantine import QuarantineEntry, parse_selector
from tests.unit import test_dynamodb_recall_index as deployed
from tests.unit.test_dynamodb_recall_index import PRIVATE, SCOPE, World, fill, recalled, source_of

world = deployed.world  # the fixture: DynamoDB and S3 on moto, request logs


def _trust_of_private(found: object) -> Trust:
    entries = found.entries
    (shown,) = [e.version for e in entries if e.version.content == PRIVATE]
    trust: Trust = shown.trust
    return trust


def test_a_quarantine_reaches_warm_and_cold_readers_without_an_extra_read(world: World) -> None:
    warm = world.open()
    fill(warm)
    assert _trust_of_private(recalled(warm, world.clock)) is Trust.TRUSTED
    assert world.db_log.during(lambda: recalled(warm, world.clock)) == ["GetItem"]

    operator = world.open()
    assert operator.quarantine is not None
    added = QuarantineEntry(
        memory_id=SCOPE.memory_id, selector=parse_selector("session:s1"), added_at=world.clock.now()
    )
    assert operator.quarantine.add(added)

    assert _trust_of_private(recalled(warm, world.clock)) is Trust.UNTRUSTED  # rebuilt once
    # A block showing quarantined records searches the records the list does not cover once
    # more: a second generation read, never a read of the table or of the list.
    two_reads = ["GetItem", "GetItem"]
    assert world.db_log.during(lambda: recalled(warm, world.clock)) == two_reads
    cold = world.open()
    db = world.db_log.during(lambda: recalled(cold, world.clock))
    assert db == two_reads  # the object carries the list
    assert source_of(cold).fetched == 1
    assert _trust_of_private(recalled(cold, world.clock)) is Trust.UNTRUSTED

    assert operator.quarantine.remove(SCOPE.memory_id, parse_selector("session:s1"))
    assert _trust_of_private(recalled(warm, world.clock)) is Trust.TRUSTED
    assert _trust_of_private(recalled(world.open(), world.clock)) is Trust.TRUSTED
