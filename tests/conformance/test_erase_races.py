"""An erase that lands while a rollout is being extracted wins, on every backend (issue 17,
class 7): the hijacked model (the shipped ``ScriptedModel``) erases the actor, or forgets a
record, in the middle of the extraction call, and then answers with exactly the erased fact.
Nothing it planned from the rollout read before the erase is written, and afterwards no byte of
the erased conversation is left in the SQLite file, its WAL and the staging folder, nor in any
DynamoDB item or S3 object on moto.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.consolidate.commit import consolidate_scope
from cairn.erasure import erase_actor
from cairn.errors import RecordNotFoundError
from cairn.extract.delivery import build_consumer, consume
from cairn.extract.staging import RolloutPipeline
from cairn.memories import StrategyKind
from cairn.model_request import ModelRequest
from cairn.models import Scope
from cairn.ports import StagingStore, Stores
from cairn.rollout.index import TriggerPolicy
from cairn.rollout.payload import RolloutNotice
from cairn.testing import ScriptedModel
from tests.conformance.erasure_scan import stored_bytes
from tests.conformance.rollout_samples import require_rollouts, turn
from tests.conformance.samples import create
from tests.unit.consolidation_support import INFERRED, Bench, alias_of, answer
from tests.unit.consolidation_support import SCOPE as CONSOLIDATION_SCOPE
from tests.unit.extraction_inputs import (
    ACTOR,
    FACTS,
    MEMORY_ID,
    candidates,
    decisions,
    memory,
    strategy,
)

SCOPE = Scope(memory_id=MEMORY_ID, actor_id=ACTOR)
NEIGHBOUR = Scope(memory_id=MEMORY_ID, actor_id="tg:99999")
# Distinctive ASCII: it cannot occur in a file or an item by accident, and JSON keeps it as is.
SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password
KEPT = "Plays-Ukulele-On-Thursdays-5127"
FACTS_ONLY = memory(strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/"))
POLICY = TriggerPolicy(strategy_ids=(FACTS,), message_count=2)


class Notices:
    """A notifier that keeps what it was asked to announce, for the test to deliver."""

    def __init__(self) -> None:
        self.sent: list[RolloutNotice] = []

    def announce(self, notice: RolloutNotice) -> None:
        self.sent.append(notice)


def converse(
    stores: Stores, staging: StagingStore, clock: FixedClock, scope: Scope, text: str
) -> RolloutNotice:
    """Two turns of ``scope``'s actor, staged as one rollout; its notice."""
    notices = Notices()
    pipeline = RolloutPipeline(require_rollouts(stores, "this"), staging, notices, clock)
    pipeline.append(scope, turn(text, clock=clock), POLICY)
    pipeline.append(scope, turn("thanks", clock=clock), POLICY)
    (notice,) = notices.sent
    return notice


def deliver(
    stores: Stores, staging: StagingStore, clock: FixedClock, notice: RolloutNotice, model: Any
) -> str:
    consumer = build_consumer(stores, staging, model=model, embedder=None, clock=clock)
    consumer = dataclasses.replace(consumer, memories=lambda _: FACTS_ONLY)
    consumed = consume(notice, consumer)
    assert consumed.status != "failed", consumed.reason
    return consumed.status


def hijacked(before_answering: Callable[[], object]) -> ScriptedModel:
    """A model that erases first and then answers with exactly the erased fact."""

    def answer(request: ModelRequest) -> str:
        before_answering()
        return candidates((f"The user's passport is {SECRET}.", [1]))

    return ScriptedModel([answer, answer])


def test_erasing_the_actor_mid_extraction_leaves_no_record_of_what_it_said(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    notice = converse(stores, staging, clock, SCOPE, f"My passport is {SECRET}.")
    model = hijacked(lambda: erase_actor(stores, SCOPE, staging=staging))

    status = deliver(stores, staging, clock, notice, model)

    assert status == "unknown"  # read again after the erase: the rollout went with it
    assert stores.records.list_records(SCOPE, include_inactive=True).items == ()


def test_erasing_a_record_mid_extraction_drops_the_plan_read_before_it(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    erased = create(stores, f"Passport {SECRET}", scope=SCOPE, namespace=f"/facts/{ACTOR}/")
    notice = converse(stores, staging, clock, SCOPE, "I like tea.")

    def first(request: ModelRequest) -> str:
        stores.records.erase(SCOPE, erased.record_id)
        return candidates((f"The user's passport is {SECRET}.", [1]))

    # The hijacked judge files it beside the record it read. The delivery is then read and
    # planned once more after the erase; this time the model answers with what the turns say.
    model = ScriptedModel(
        [
            first,
            decisions({"candidate": 1, "action": "create"}),
            candidates(("The user likes tea.", [1])),
        ]
    )

    status = deliver(stores, staging, clock, notice, model)

    assert status == "consumed"
    live = stores.records.list_records(SCOPE).items
    assert [v.content for v in live] == ["The user likes tea."]
    for listed in stores.records.list_records(SCOPE, include_inactive=True).items:
        history = stores.records.history(SCOPE, listed.record_id)
        assert all(SECRET not in v.model_dump_json() for v in history)
    assert stores.records.get(SCOPE, erased.record_id).status.value == "erased"


def test_a_byte_scan_after_an_erase_that_raced_extraction_finds_nothing(
    backend_name: str, stores: Stores, staging: StagingStore, clock: FixedClock, tmp_path: Path
) -> None:
    if backend_name == "memory":
        pytest.skip("the in-memory backend keeps no bytes to scan")
    converse(stores, staging, clock, NEIGHBOUR, f"My hobby: {KEPT}.")
    notice = converse(stores, staging, clock, SCOPE, f"My passport is {SECRET}.")
    model = hijacked(lambda: erase_actor(stores, SCOPE, staging=staging))

    assert deliver(stores, staging, clock, notice, model) == "unknown"

    everything = stored_bytes(backend_name, tmp_path)
    assert SECRET.encode() not in everything
    assert KEPT.encode() in everything  # the scan reads what is really stored


def test_a_consolidation_pass_that_read_a_record_before_its_erase_writes_nothing(
    stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    bench = Bench(tmp_path, stores=stores, clock=clock)
    erased = bench.remember(f"The user's passport is {SECRET}.", sources=(INFERRED,))
    run = bench.run("Remember my passport number.")

    def erase_then_write_it_back(request: ModelRequest) -> str:
        alias_of(request, erased.content)  # the pass was shown the record ...
        stores.records.erase(CONSOLIDATION_SCOPE, erased.record_id)  # ... then it was erased
        return answer({"kind": "add", "content": f"Passport: {SECRET}", "evidence": [1]})

    bench.model.queue(erase_then_write_it_back)

    outcome = consolidate_scope(CONSOLIDATION_SCOPE, bench.consolidator())

    assert outcome.status == "conflict"
    assert outcome.retryable
    assert bench.live() == []
    assert bench.pending() == [run.rollout_id]  # the evidence waits for a pass after the erase


class DeleteMemoryAfterApply:
    """The record store, except that right after the first apply commits, DeleteMemory runs:
    the erase lands between extraction's apply and its directory placement."""

    def __init__(self, records: Any, delete: Callable[[], object]) -> None:
        self._records, self._delete = records, delete
        self.written: list[str] = []

    def apply(self, *args: Any, **kwargs: Any) -> Any:
        written = self._records.apply(*args, **kwargs)
        self.written += [v.record_id for v in written]
        delete, self._delete = self._delete, lambda: None
        delete()
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._records, name)


def test_delete_memory_between_extractions_apply_and_placement_leaves_no_placement(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    from cairn.api.context import ApiContext
    from cairn.api.operations.memories import delete_memory

    if stores.memories is None or stores.directory is None:
        pytest.skip("this backend serves no AgentCore API")
    stores.memories.create(FACTS_ONLY)
    notice = converse(stores, staging, clock, SCOPE, f"My passport is {SECRET}.")
    pipeline = RolloutPipeline(require_rollouts(stores, "this"), staging, Notices(), clock)
    api = ApiContext.build(stores, embedder=None, clock=clock, extraction=pipeline)
    racing = DeleteMemoryAfterApply(
        stores.records, lambda: delete_memory(api, {"memoryId": MEMORY_ID})
    )
    model = ScriptedModel(
        [
            candidates((f"The user's passport is {SECRET}.", [1])),
            decisions({"candidate": 1, "action": "create"}),
        ]
    )

    status = deliver(dataclasses.replace(stores, records=racing), staging, clock, notice, model)

    assert status == "unknown"  # the rollout went with the memory
    assert racing.written  # the apply committed before DeleteMemory erased it
    assert stores.directory.actors(MEMORY_ID) == ()
    for record_id in racing.written:
        with pytest.raises(RecordNotFoundError):
            stores.directory.locate(MEMORY_ID, record_id)
    assert stores.records.list_records(SCOPE, include_inactive=True).items == ()


def test_an_actor_erased_between_a_passs_apply_and_its_placement_leaves_no_placement(
    stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    if stores.directory is None:
        pytest.skip("this backend keeps no record directory")
    bench = Bench(tmp_path, stores=stores, clock=clock)
    bench.run("Remember that I moved to Porto.")
    bench.model.queue(answer({"kind": "add", "content": f"Lives in {SECRET}", "evidence": [1]}))
    racing = DeleteMemoryAfterApply(
        stores.records, lambda: erase_actor(stores, CONSOLIDATION_SCOPE, staging=bench.staging)
    )

    outcome = consolidate_scope(
        CONSOLIDATION_SCOPE,
        bench.consolidator(stores=dataclasses.replace(stores, records=racing)),
    )

    assert outcome.status == "committed"  # the pass won its apply; the erase came right after
    assert racing.written
    for record_id in racing.written:
        with pytest.raises(RecordNotFoundError):
            stores.directory.locate(CONSOLIDATION_SCOPE.memory_id, record_id)
    assert stores.directory.actors(CONSOLIDATION_SCOPE.memory_id) == ()
