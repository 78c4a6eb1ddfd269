"""The extractor end to end on real stores: what a rollout writes, and what faults leave behind."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn.changes import Change, FoldIn
from cairn.errors import InvalidInputError, ModelTimeoutError, StoreUnavailableError
from cairn.extract.extractor import extract_rollout
from cairn.local import offline_model
from cairn.memories import MemoryConfig, SelfManagedConfig, StrategyKind, TriggerConditions
from cairn.models import RecordVersion, Role, SourceKind, Status, Trust
from cairn.ports import RecordStore, Stores
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend, ScriptedModel
from tests.unit.extraction_inputs import (
    ACTOR,
    FACTS,
    MEMORY_ID,
    NOTHING,
    SUMMARY,
    T0,
    candidates,
    decisions,
    memory,
    message,
    rollout,
    strategy,
)

SCOPE = rollout(message(1, "x")).scope
FACTS_ONLY = memory(strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/"))


@pytest.fixture(params=["memory", "sqlite"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    clock = FixedClock(T0)
    opened = (
        InMemoryBackend(clock).stores()
        if request.param == "memory"
        else SQLiteBackend(tmp_path / "cairn.db", clock).stores()
    )
    yield opened
    opened.close()


def everything(stores: Stores) -> list[RecordVersion]:
    """Every version of every record in the scope, oldest first per record."""
    heads = stores.records.list_records(SCOPE, include_inactive=True, limit=1000).items
    return [v for head in heads for v in stores.records.history(SCOPE, head.record_id)]


def run(stores: Stores, payload: Any, model: Any, memory_: MemoryConfig = FACTS_ONLY) -> Any:
    return extract_rollout(
        payload,
        memory_,
        stores=stores,
        model=model,
        embedder=HashingEmbedder(),
        clock=FixedClock(T0),
    )


STATED = rollout(
    message(1, "Hi! I prefer window seats. My office is in Lisbon."),
    message(2, "Noted.", role=Role.ASSISTANT),
    message(3, "Remember that I'm allergic to peanuts."),
)


def test_the_offline_extractor_files_each_statement_once_in_its_namespace(stores: Stores) -> None:
    outcome = run(stores, STATED, offline_model(), memory())
    assert outcome.status == "applied"
    assert outcome.done
    filed: dict[str, set[str]] = {}
    for version in everything(stores):
        filed.setdefault(version.namespace, set()).add(version.content)
    assert filed == {
        f"/facts/{ACTOR}/": {"The user's office is in Lisbon.", "The user is allergic to peanuts."},
        f"/preferences/{ACTOR}/": {"The user prefers window seats."},
        f"/summaries/{ACTOR}/chat-1/": {
            "Stated in this session: The user prefers window seats; The user's office is in "
            "Lisbon; The user is allergic to peanuts."
        },
    }
    for version in everything(stores):
        assert version.trust is Trust.UNTRUSTED
        assert version.confidence <= 0.7
        assert {s.kind for s in version.sources} == {SourceKind.MODEL}
        assert {s.rollout_id for s in version.sources} == {"ro-1"}
        assert version.embedding is not None
    assert outcome.counts.created == 4
    assert len(outcome.written) == 4


def test_extracted_records_can_be_found_by_id_through_the_record_directory(stores: Stores) -> None:
    outcome = run(stores, STATED, offline_model(), memory())
    assert stores.directory is not None
    for ref in outcome.written:
        placed = stores.directory.locate(MEMORY_ID, ref.record_id)
        assert placed.actor_id == ACTOR


def test_a_duplicate_delivery_writes_nothing_and_asks_no_model(stores: Stores) -> None:
    run(stores, STATED, offline_model(), memory())
    before = everything(stores)

    again = run(stores, STATED, ScriptedModel(), memory())  # any model call would raise

    assert again.status == "already_applied"
    assert again.done
    assert again.counts.already_applied == 3
    assert everything(stores) == before


def test_a_model_timeout_is_retryable_and_writes_nothing(stores: Stores) -> None:
    model = ScriptedModel([ModelTimeoutError("the model did not answer in time")])
    with pytest.raises(ModelTimeoutError) as raised:
        run(stores, STATED, model)
    assert raised.value.retryable
    assert everything(stores) == []


def test_a_timeout_of_a_later_call_still_writes_nothing(stores: Stores) -> None:
    # Facts extract fine, then the preference call times out: nothing is applied before the
    # last model call, so the retry starts from a clean slate.
    model = ScriptedModel(
        [candidates(("The user's office is in Lisbon.", [1])), ModelTimeoutError("slow")]
    )
    with pytest.raises(ModelTimeoutError):
        run(stores, STATED, model, memory())
    assert everything(stores) == []


def test_output_invalid_twice_leaves_the_rollout_pending_with_a_reason(stores: Stores) -> None:
    model = ScriptedModel(["I found some facts!", '{"candidates": [{"content": "x"}]}'])
    outcome = run(stores, STATED, model)
    assert outcome.status == "invalid_output"
    assert not outcome.done
    assert outcome.reason is not None
    assert FACTS in outcome.reason
    assert "evidence" in outcome.reason
    assert outcome.usage.calls == 2
    assert everything(stores) == []


def test_output_invalid_once_then_valid_is_filed(stores: Stores) -> None:
    model = ScriptedModel(["not json", candidates(("The user's office is in Lisbon.", [1]))])
    outcome = run(stores, STATED, model)
    assert outcome.status == "applied"
    assert [v.content for v in everything(stores)] == ["The user's office is in Lisbon."]


def test_a_judge_that_answers_invalidly_twice_writes_nothing(stores: Stores) -> None:
    run(stores, STATED, ScriptedModel([candidates(("The user's office is in Lisbon.", [1]))]))
    before = everything(stores)
    model = ScriptedModel(
        [
            candidates(("The user's office is in Lisbon now.", [1])),
            decisions({"candidate": 5, "action": "create"}),
            decisions({"candidate": 1, "action": "same", "target": 8}),
        ]
    )
    outcome = run(stores, rollout(message(9, "Still Lisbon."), rollout_id="ro-2"), model)
    assert outcome.status == "invalid_output"
    assert everything(stores) == before


def test_a_judge_timeout_writes_nothing(stores: Stores) -> None:
    run(stores, STATED, ScriptedModel([candidates(("The user's office is in Lisbon.", [1]))]))
    before = everything(stores)
    model = ScriptedModel(
        [candidates(("The user's office moved to Porto.", [1])), ModelTimeoutError("slow")]
    )
    with pytest.raises(ModelTimeoutError):
        run(stores, rollout(message(9, "We moved to Porto."), rollout_id="ro-2"), model)
    assert everything(stores) == before


def test_the_same_statement_in_a_later_rollout_is_folded_in_not_duplicated(stores: Stores) -> None:
    run(stores, STATED, offline_model(), memory())
    later = rollout(message(20, "My office is in Lisbon."), rollout_id="ro-2")
    outcome = run(stores, later, offline_model(), memory())
    # The fact, and the session summary, which already said it.
    assert (outcome.counts.folded_in, outcome.counts.created) == (2, 0)
    facts = stores.records.list_records(SCOPE, namespace_prefix=f"/facts/{ACTOR}/").items
    office = [v for v in facts if "office" in v.content]
    assert len(office) == 1
    assert office[0].seen_count == 2
    assert {s.rollout_id for s in office[0].sources} == {"ro-1", "ro-2"}


def test_a_changed_fact_supersedes_the_inferred_one(stores: Stores) -> None:
    run(stores, STATED, offline_model(), memory())
    moved = rollout(message(20, "My office is in Porto."), rollout_id="ro-2")
    run(stores, moved, offline_model(), memory())
    facts = stores.records.list_records(SCOPE, namespace_prefix=f"/facts/{ACTOR}/").items
    assert sorted(v.content for v in facts) == [
        "The user is allergic to peanuts.",
        "The user's office is in Porto.",
    ]
    old = [v for v in everything(stores) if v.content == "The user's office is in Lisbon."]
    assert old[-1].status is Status.SUPERSEDED


def test_one_summary_per_session_evolves_with_each_rollout(stores: Stores) -> None:
    summaries_only = memory(
        strategy(SUMMARY, StrategyKind.SUMMARY, "/summaries/{actorId}/{sessionId}/")
    )
    ids = (SUMMARY,)
    run(
        stores,
        rollout(message(1, "I prefer tea."), strategy_ids=ids),
        offline_model(),
        summaries_only,
    )
    run(
        stores,
        rollout(message(2, "My dog is Rex."), strategy_ids=ids, rollout_id="ro-2"),
        offline_model(),
        summaries_only,
    )
    run(
        stores,
        rollout(
            message(3, "I prefer jazz."), strategy_ids=ids, rollout_id="ro-3", session_id="chat-2"
        ),
        offline_model(),
        summaries_only,
    )
    live = stores.records.list_records(SCOPE).items
    by_namespace = {v.namespace: v for v in live}
    assert len(live) == 2
    first = by_namespace[f"/summaries/{ACTOR}/chat-1/"]
    assert first.version == 2
    assert first.content == ("Stated in this session: The user prefers tea; The user's dog is Rex.")
    assert by_namespace[f"/summaries/{ACTOR}/chat-2/"].content.endswith("prefers jazz.")


class FailingSecondApply:
    """A record store whose second ``apply`` fails as if the process died there."""

    def __init__(self, inner: RecordStore) -> None:
        self.inner = inner
        self.applies = 0

    def apply(self, scope: Any, changes: Sequence[Change], **kwargs: Any) -> Any:
        self.applies += 1
        if self.applies == 2:
            raise StoreUnavailableError("the store went away")
        return self.inner.apply(scope, changes, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_delivery_that_died_between_namespaces_is_finished_by_the_next(stores: Stores) -> None:
    dying = dataclasses.replace(stores, records=FailingSecondApply(stores.records))
    with pytest.raises(StoreUnavailableError):
        run(dying, STATED, offline_model(), memory())
    assert len(everything(stores)) == 2  # the facts namespace was applied, atomically

    outcome = run(stores, STATED, offline_model(), memory())

    assert outcome.counts.already_applied == 1
    contents = sorted(v.content for v in everything(stores))
    assert len(contents) == len(set(contents)) == 4  # every statement once, none twice


class MovingHeadOnce:
    """A record store where another writer confirms a record just before the first apply."""

    def __init__(self, inner: RecordStore, record_id: str) -> None:
        self.inner = inner
        self.record_id = record_id
        self.moved = False

    def apply(
        self,
        scope: Any,
        changes: Sequence[Change],
        *,
        snapshot: Mapping[str, int] | None = None,
        erasures: int | None = None,
    ) -> Any:
        if not self.moved:
            self.moved = True
            self.inner.apply(scope, [FoldIn(record_id=self.record_id)])
        return self.inner.apply(scope, changes, snapshot=snapshot, erasures=erasures)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_snapshot_conflict_is_planned_again_once_from_a_fresh_read(stores: Stores) -> None:
    run(stores, STATED, ScriptedModel([candidates(("The user's office is in Lisbon.", [1]))]))
    (office,) = stores.records.list_records(SCOPE).items
    racing = dataclasses.replace(stores, records=MovingHeadOnce(stores.records, office.record_id))
    model = ScriptedModel(
        [
            candidates(("The user's office is in Lisbon, by the river.", [1])),
            decisions(
                {
                    "candidate": 1,
                    "action": "merge",
                    "target": 1,
                    "content": "The user's office is in Lisbon, by the river.",
                }
            ),
            decisions(
                {
                    "candidate": 1,
                    "action": "merge",
                    "target": 1,
                    "content": "The user's office is in Lisbon, by the river.",
                }
            ),
        ]
    )
    outcome = run(racing, rollout(message(9, "It's by the river."), rollout_id="ro-2"), model)
    assert outcome.status == "applied"
    assert model.remaining == 0  # the judge was asked again after the conflict
    head = stores.records.get(SCOPE, office.record_id)
    assert head.version == 3  # the other writer's fold-in, then the merge
    assert head.seen_count == 2
    assert head.content == "The user's office is in Lisbon, by the river."


def test_a_template_extraction_cannot_fill_is_refused_before_any_model_call(
    stores: Stores,
) -> None:
    bad = memory(strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{team}/{actorId}/"))
    with pytest.raises(InvalidInputError, match="team"):
        run(stores, STATED, ScriptedModel(), bad)


def test_an_actor_whose_records_would_lie_under_another_actors_namespace_is_refused(
    stores: Stores,
) -> None:
    # Actor "tg:12345/facts" would file under /mem/tg:12345/facts/facts/, which every read of
    # actor "tg:12345"'s whole namespace /mem/tg:12345/facts/ also covers.
    tailed = memory(strategy(FACTS, StrategyKind.SEMANTIC, "/mem/{actorId}/facts/"))
    payload = STATED.model_copy(update={"actor_id": f"{ACTOR}/facts"})
    with pytest.raises(InvalidInputError, match="lies under"):
        run(stores, payload, ScriptedModel(), tailed)
    assert run(stores, STATED, ScriptedModel([NOTHING]), tailed).done  # the shorter id is fine


def test_a_rollout_of_another_memory_is_refused(stores: Stores) -> None:
    other = FACTS_ONLY.model_copy(update={"memory_id": "other-AbCdEf1234"})
    with pytest.raises(InvalidInputError, match="belongs to memory"):
        run(stores, STATED, ScriptedModel(), other)


def test_a_self_managed_strategy_is_left_to_the_user_s_own_extractor(stores: Stores) -> None:
    self_managed = SelfManagedConfig(
        triggers=TriggerConditions(message_count=5),
        topic_arn="arn:aws:sns:us-east-1:123456789012:cairn.fifo",
        payload_bucket="cairn-payloads",
    )
    custom = strategy(
        "custom-AbCdEf1234",
        StrategyKind.CUSTOM,
        "/custom/{actorId}/",
        self_managed=self_managed,
    )
    outcome = run(
        stores,
        rollout(message(1, "I prefer tea."), strategy_ids=("custom-AbCdEf1234",)),
        ScriptedModel(),
        memory(custom),
    )
    assert outcome.status == "applied"
    assert everything(stores) == []


def test_nothing_worth_keeping_is_a_done_rollout_with_nothing_written(stores: Stores) -> None:
    outcome = run(stores, STATED, ScriptedModel([NOTHING]))
    assert (outcome.status, outcome.done, outcome.written) == ("applied", True, ())
