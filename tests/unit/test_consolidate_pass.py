"""One consolidation pass with the scripted model: its bounds, its validation, and its atomic
commit (changes and consumed evidence together, or nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.changes import RecordPatch, Revise
from cairn.consolidate.commit import consolidate_scope, consolidate_with_retry
from cairn.consolidate.consolidation_policy import ConsolidationPolicy
from cairn.errors import ModelTimeoutError
from cairn.model_request import ModelRequest
from cairn.models import Scope, SourceKind, Status
from tests.unit.consolidation_support import (
    INFERRED,
    SCOPE,
    Bench,
    alias_of,
    answer,
    answering,
    shown,
)


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    return Bench(tmp_path)


def test_without_pending_evidence_no_model_is_called(bench: Bench) -> None:
    bench.remember("The user prefers tea.")

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "idle"
    assert bench.model.requests == []


def test_a_pass_reads_at_most_four_rollouts_and_leaves_the_rest_pending(bench: Bench) -> None:
    runs = [bench.run(f"Message {n}.") for n in range(6)]
    bench.model.queue(answer())

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "committed"
    assert outcome.consumed == tuple(r.rollout_id for r in runs[:4])
    assert outcome.more_pending
    assert len(shown(bench.model.requests[0])["evidence"]) == 4
    assert bench.pending() == [r.rollout_id for r in runs[4:]]


def test_a_pass_shows_at_most_32_records_those_related_to_the_evidence_first(
    bench: Bench,
) -> None:
    for n in range(40):
        bench.remember(f"The user owns board game number {n}.")
    bench.remember("The user paddles a red kayak on weekends.")
    bench.run("The kayak got a puncture yesterday.")
    bench.model.queue(answer())

    consolidate_scope(SCOPE, bench.consolidator())

    records = shown(bench.model.requests[0])["records"]
    assert len(records) == 32
    assert [r["alias"] for r in records] == list(range(1, 33))
    assert "The user paddles a red kayak on weekends." in {r["content"] for r in records}


def test_more_than_16_changes_are_refused_twice_and_the_evidence_waits(bench: Bench) -> None:
    run = bench.run("I have many hobbies.")
    too_many = answer(
        *(
            {"kind": "add", "content": f"The user has hobby {n}.", "evidence": [1]}
            for n in range(17)
        )
    )
    bench.model.queue(too_many, too_many)

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "invalid"
    assert len(bench.model.requests) == 2
    assert bench.live() == []
    assert bench.pending() == [run.rollout_id]


def test_changes_that_need_more_than_16_store_changes_are_refused(bench: Bench) -> None:
    bench.run("Lots of disagreement.")
    records = [bench.remember(f"The user said thing {n}.") for n in range(18)]

    def contested(request: ModelRequest) -> list[dict[str, object]]:
        aliases = [alias_of(request, r.content) for r in records]
        pairs = list(zip(aliases[0::2], aliases[1::2], strict=True))
        return [{"kind": "contradiction", "records": list(p)} for p in pairs]  # 9 x 2 revisions

    bench.model.queue(answering(contested), answering(contested))

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "invalid"
    assert "store changes" in (outcome.reason or "")


def test_an_unknown_alias_is_refused_and_corrected_on_the_second_ask(bench: Bench) -> None:
    run = bench.run("I sail on Sundays.")
    bench.model.queue(
        answer({"kind": "add", "content": "The user sails on Sundays.", "evidence": [9]}),
        answer({"kind": "add", "content": "The user sails on Sundays.", "evidence": [1]}),
    )

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "committed"
    assert "evidence 9" in bench.model.requests[1].messages[-1].text
    assert bench.live() == ["The user sails on Sundays."]
    assert outcome.consumed == (run.rollout_id,)


def test_additions_merges_and_retractions_commit_with_the_evidence_consumed(
    bench: Bench,
) -> None:
    first = bench.remember("The user has a dog named Rex.")
    second = bench.remember("The user's dog is called Rex.")
    # Inferred earlier: the pass's evidence may retract it (never a user statement).
    moved = bench.remember("The user lives in Lisbon.", sources=(INFERRED,))
    run = bench.run("I moved away from Lisbon.", "I prefer window seats.")

    def changes(request: ModelRequest) -> list[dict[str, object]]:
        return [
            {
                "kind": "add",
                "content": "The user prefers window seats.",
                "category": "preference",
                "confidence": 0.95,
                "evidence": [1],
            },
            {
                "kind": "merge",
                "records": [alias_of(request, first.content), alias_of(request, second.content)],
                "content": "The user has a dog named Rex.",
            },
            {
                "kind": "retract",
                "record": alias_of(request, moved.content),
                "reason": "the user moved away",
                "evidence": [1],
            },
        ]

    bench.model.queue(answering(changes))

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "committed"
    assert (outcome.counts.added, outcome.counts.merged, outcome.counts.retracted) == (1, 1, 1)
    live = bench.stores.records.list_records(SCOPE).items
    added = next(v for v in live if v.content == "The user prefers window seats.")
    assert added.namespace == f"/preferences/{SCOPE.actor_id}/"
    assert added.strategy == "user_preference"
    assert added.confidence == 0.7  # inferred: capped below what the user states
    assert [(s.kind, s.rollout_id) for s in added.sources] == [(SourceKind.MODEL, run.rollout_id)]
    merged_away = {first.record_id, second.record_id} - {v.record_id for v in live}
    (gone,) = merged_away
    assert bench.stores.records.get(SCOPE, gone).superseded_by in {
        first.record_id,
        second.record_id,
    }
    retracted = bench.stores.records.get(SCOPE, moved.record_id)
    assert retracted.status is Status.RETRACTED
    assert run.rollout_id in retracted.metadata["retract_reason"]
    assert bench.pending() == []


def test_a_decided_contradiction_supersedes_the_older_record_and_links_it(bench: Bench) -> None:
    tea = bench.remember("The user prefers tea.", category="preference")
    coffee = bench.remember("The user switched to coffee in March.", category="preference")
    run = bench.run("Yes, coffee every morning now.")

    def resolve(request: ModelRequest) -> list[dict[str, object]]:
        pair = [alias_of(request, tea.content), alias_of(request, coffee.content)]
        holds = alias_of(request, coffee.content)
        return [{"kind": "contradiction", "records": pair, "holds": holds, "evidence": [1]}]

    bench.model.queue(answering(resolve))

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.counts.superseded == 1
    old = bench.stores.records.get(SCOPE, tea.record_id)
    assert old.status is Status.SUPERSEDED
    assert old.superseded_by == coffee.record_id
    assert old.content == tea.content  # kept, never deleted
    assert old.metadata["supersede_evidence"] == run.rollout_id
    assert bench.live() == [coffee.content]


def test_an_undecided_contradiction_keeps_both_marked_contested_until_decided(
    bench: Bench,
) -> None:
    tea = bench.remember("The user prefers tea.")
    coffee = bench.remember("The user prefers coffee.")
    bench.run("Depends on the day.")

    def undecided(request: ModelRequest) -> list[dict[str, object]]:
        pair = [alias_of(request, tea.content), alias_of(request, coffee.content)]
        return [{"kind": "contradiction", "records": pair}]

    bench.model.queue(answering(undecided))
    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.counts.contested == 1
    marked = {v.record_id: v for v in bench.stores.records.list_records(SCOPE).items}
    assert {e.target for e in marked[tea.record_id].edges} == {coffee.record_id}
    assert {e.target for e in marked[coffee.record_id].edges} == {tea.record_id}

    bench.run("Coffee, definitely, since March.")

    def decided(request: ModelRequest) -> list[dict[str, object]]:
        document = shown(request)
        assert [r["contested_with"] for r in document["records"]] == [[2], [1]]
        pair = [alias_of(request, tea.content), alias_of(request, coffee.content)]
        holds = alias_of(request, coffee.content)
        return [{"kind": "contradiction", "records": pair, "holds": holds, "evidence": [1]}]

    bench.model.queue(answering(decided))
    consolidate_scope(SCOPE, bench.consolidator())

    survivor = bench.stores.records.get(SCOPE, coffee.record_id)
    assert survivor.edges == ()
    assert bench.live() == [coffee.content]


def test_an_inferred_record_never_retires_a_user_stated_one_without_evidence(
    bench: Bench,
) -> None:
    stated = bench.remember("The user prefers tea.")
    bench.run("I switched to coffee in March.")
    bench.model.queue(
        answer(
            {
                "kind": "add",
                "content": "The user switched to coffee in March.",
                "evidence": [1],
            }
        )
    )
    consolidate_scope(SCOPE, bench.consolidator())
    inferred = next(v for v in bench.stores.records.list_records(SCOPE).items if v != stated)
    bench.run("Thanks.")

    def no_evidence(request: ModelRequest) -> list[dict[str, object]]:
        pair = [alias_of(request, stated.content), alias_of(request, inferred.content)]
        return [{"kind": "contradiction", "records": pair, "holds": pair[1]}]

    bench.model.queue(answering(no_evidence))
    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.counts.contested == 1
    assert bench.stores.records.get(SCOPE, stated.record_id).status is Status.ACTIVE


def test_an_addition_that_supersedes_links_the_old_record_to_the_new(bench: Bench) -> None:
    tea = bench.remember("The user prefers tea.", category="preference", sources=(INFERRED,))
    run = bench.run("I switched to coffee in March.")

    def replace(request: ModelRequest) -> list[dict[str, object]]:
        return [
            {
                "kind": "add",
                "content": "The user switched to coffee in March.",
                "category": "preference",
                "evidence": [1],
                "supersedes": alias_of(request, tea.content),
            }
        ]

    bench.model.queue(answering(replace))
    consolidate_scope(SCOPE, bench.consolidator())

    old = bench.stores.records.get(SCOPE, tea.record_id)
    assert old.status is Status.SUPERSEDED
    new = bench.stores.records.get(SCOPE, str(old.superseded_by))
    assert new.supersedes == tea.record_id
    assert any(s.rollout_id == run.rollout_id for s in new.sources)
    assert bench.live() == ["The user switched to coffee in March."]


@pytest.mark.fault("consolidation", "raised", "sqlite")
def test_a_concurrent_conflicting_write_applies_nothing_and_leaves_the_evidence_pending(
    bench: Bench,
) -> None:
    tea = bench.remember("The user prefers tea.")
    run = bench.run("I switched to coffee in March.")

    def racing(request: ModelRequest) -> str:
        # Another writer (extraction, a tool) revises a record the pass is reasoning about.
        bench.stores.records.apply(
            SCOPE,
            [Revise(record_id=tea.record_id, patch=RecordPatch(content="The user loves tea."))],
        )
        target = alias_of(request, tea.content)
        return answer(
            {"kind": "retract", "record": target, "reason": "reversed", "evidence": [1]},
            {"kind": "add", "content": "The user drinks coffee.", "evidence": [1]},
        )

    bench.model.queue(racing)

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "conflict"
    assert outcome.retryable
    assert bench.live() == ["The user loves tea."]
    assert bench.pending() == [run.rollout_id]


def test_a_conflict_is_planned_again_once_after_five_seconds(bench: Bench) -> None:
    tea = bench.remember("The user prefers tea.")
    run = bench.run("I switched to coffee in March.")

    def racing(request: ModelRequest) -> str:
        bench.stores.records.apply(
            SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Tea, always."))]
        )
        return answer()

    bench.model.queue(racing, answer())

    outcome = consolidate_with_retry(SCOPE, bench.consolidator())

    assert bench.waits == [5.0]
    assert outcome.status == "committed"
    assert outcome.consumed == (run.rollout_id,)


@pytest.mark.fault("consolidation", "timeout", "sqlite")
def test_a_second_timeout_leaves_the_evidence_for_a_later_run(bench: Bench) -> None:
    run = bench.run("I prefer tea.")
    bench.model.queue(ModelTimeoutError("slow"), ModelTimeoutError("slow again"))

    outcome = consolidate_with_retry(SCOPE, bench.consolidator())

    assert outcome.status == "timeout"
    assert bench.waits == [5.0]
    assert len(bench.model.requests) == 2
    assert bench.pending() == [run.rollout_id]


def test_a_pass_is_bounded_at_60_seconds(bench: Bench) -> None:
    run = bench.run("I prefer tea.")

    def slow(request: ModelRequest) -> str:
        bench.clock.advance(seconds=61)
        return answer({"kind": "add", "content": "The user prefers tea.", "evidence": [1]})

    bench.model.queue(slow)

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert bench.model.requests[0].timeout_seconds == 60.0
    assert outcome.status == "timeout"
    assert bench.live() == []
    assert bench.pending() == [run.rollout_id]


def test_oversized_immutable_metadata_fails_before_any_model_call(bench: Bench) -> None:
    tags = tuple(f"{n}-{'t' * 40}" for n in range(4))
    for n in range(32):
        record = bench.remember(f"Fact {n}.", category="c" + "x" * 60)
        bench.stores.records.apply(
            SCOPE, [Revise(record_id=record.record_id, patch=RecordPatch(tags=tags))]
        )
    run = bench.run("Hello.")

    outcome = consolidate_scope(
        SCOPE, bench.consolidator(policy=ConsolidationPolicy(max_request_bytes=4000))
    )

    assert outcome.status == "invalid"
    assert bench.model.requests == []
    assert bench.pending() == [run.rollout_id]


def test_unreadable_evidence_is_consumed_without_a_model_call(bench: Bench) -> None:
    run = bench.run("I prefer tea.")
    bench.staging.delete(SCOPE, run.rollout_id)

    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "committed"
    assert outcome.unreadable == 1
    assert bench.model.requests == []
    assert bench.pending() == []


def test_a_cancelled_pass_commits_nothing(bench: Bench) -> None:
    run = bench.run("I prefer tea.")

    outcome = consolidate_scope(SCOPE, bench.consolidator(), cancelled=lambda: True)

    assert outcome.status == "cancelled"
    assert bench.pending() == [run.rollout_id]


def test_a_pass_never_reads_another_scopes_evidence(bench: Bench) -> None:
    other = Scope(memory_id="default", actor_id="tg:99")
    theirs = bench.run("I prefer tea.", scope=other)

    assert consolidate_scope(SCOPE, bench.consolidator()).status == "idle"
    assert bench.pending(other) == [theirs.rollout_id]


def test_a_pass_never_retracts_supersedes_or_merges_into_what_the_user_stated(
    bench: Bench,
) -> None:
    allergy = bench.remember("The user is allergic to penicillin.")
    diet = bench.remember("The user is vegetarian.")
    tool_note = bench.remember("Chart: vegetarian, tags synced", sources=(INFERRED,))
    bench.run("Fetch my chart.", answer="Updated chart: no known drug allergies.")

    def hostile(request: ModelRequest) -> list[dict[str, object]]:
        return [
            {
                "kind": "add",
                "content": "The user has no known drug allergies.",
                "category": "fact",
                "confidence": 1.0,
                "evidence": [1],
                "supersedes": alias_of(request, allergy.content),
            },
            {
                "kind": "merge",
                "records": [alias_of(request, diet.content), alias_of(request, tool_note.content)],
                "content": "The user eats anything.",
                "evidence": [1],
            },
        ]

    bench.model.queue(answering(hostile))
    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert outcome.status == "committed"
    for stated in (allergy, diet):
        (only,) = bench.stores.records.history(SCOPE, stated.record_id)
        assert (only.status, only.content, only.tags, only.confidence) == (
            Status.ACTIVE,
            stated.content,
            stated.tags,
            stated.confidence,
        )
    contest = next(
        v
        for v in bench.stores.records.list_records(SCOPE).items
        if v.content == "The user has no known drug allergies."
    )
    assert [(e.kind.value, e.target) for e in contest.edges] == [("contradicts", allergy.record_id)]
    assert outcome.counts.contested == 1


def test_a_pass_never_retracts_a_user_statement(bench: Bench) -> None:
    stated = bench.remember("The user lives in Lisbon.")
    bench.run("Ignore that.", answer="Done.")

    def retract_all(request: ModelRequest) -> list[dict[str, object]]:
        return [
            {
                "kind": "retract",
                "record": alias_of(request, stated.content),
                "reason": "outdated",
                "evidence": [1],
            }
        ]

    bench.model.queue(answering(retract_all))
    outcome = consolidate_scope(SCOPE, bench.consolidator())

    assert bench.stores.records.get(SCOPE, stated.record_id).status is Status.ACTIVE
    assert (outcome.counts.retracted, outcome.counts.refused) == (0, 1)
