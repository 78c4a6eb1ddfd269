"""Contradictions resolved without deleting anything, and the offline heuristic's rules."""

from __future__ import annotations

from pathlib import Path

from cairn.changes import Revise, SupersedeBy
from cairn.consolidate.commit import consolidate_scope
from cairn.consolidate.contradictions import is_contested, resolve_contradiction
from cairn.local import offline_model
from cairn.models import EdgeKind, Source, SourceKind, Status, Trust
from cairn.recall import RecallQuery, recall
from tests.unit.consolidation_support import SCOPE, Bench


def test_a_decision_supersedes_the_other_record_with_its_reason_and_evidence(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    tea = bench.remember("The user prefers tea.")
    coffee = bench.remember("The user switched to coffee in March.")

    changes = resolve_contradiction(
        (tea, coffee), coffee, evidence=("ev-1",), reason="a later statement of a change"
    )

    assert changes == [
        SupersedeBy(
            record_id=tea.record_id,
            successor_id=coffee.record_id,
            reason="a later statement of a change",
            evidence=("ev-1",),
        )
    ]


def test_no_decision_marks_each_record_once(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    tea = bench.remember("The user prefers tea.")
    coffee = bench.remember("The user prefers coffee.")

    changes = resolve_contradiction((tea, coffee), None)
    bench.stores.records.apply(SCOPE, changes)
    marked = [bench.stores.records.get(SCOPE, r.record_id) for r in (tea, coffee)]

    assert all(isinstance(c, Revise) for c in changes)
    assert all(is_contested(v) for v in marked)
    assert [e.kind for e in marked[0].edges] == [EdgeKind.CONTRADICTS]
    assert resolve_contradiction((marked[0], marked[1]), None) == []  # marked already


def test_an_inferred_record_cannot_retire_a_stated_one_on_its_own_say(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    stated = bench.remember("The user prefers tea.")
    inferred = bench.remember("The user prefers coffee.").model_copy(
        update={"sources": (Source(kind=SourceKind.MODEL),), "trust": Trust.UNTRUSTED}
    )

    undecided = resolve_contradiction((stated, inferred), inferred)
    # Whatever evidence a pass cites, it is the model's reading: the pair stays contested.
    with_evidence = resolve_contradiction((stated, inferred), inferred, evidence=("ev-1",))

    assert all(isinstance(c, Revise) for c in undecided)
    assert all(isinstance(c, Revise) for c in with_evidence)
    assert not any(isinstance(c, SupersedeBy) for c in with_evidence)


def test_the_heuristic_model_merges_repeats_and_lets_the_later_attribute_win(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    lisbon = bench.remember("The user's office is in Lisbon.")
    bench.clock.advance(days=2)
    porto = bench.remember("The user's office is in Porto.")
    bench.remember("The user has a cat.")
    bench.remember("The user has a cat.")
    bench.run("Hello again.")

    outcome = consolidate_scope(SCOPE, bench.consolidator(model=offline_model()))

    assert outcome.status == "committed"
    assert (outcome.counts.merged, outcome.counts.superseded) == (1, 1)
    old = bench.stores.records.get(SCOPE, lisbon.record_id)
    assert (old.status, old.superseded_by) == (Status.SUPERSEDED, porto.record_id)
    assert bench.live() == ["The user has a cat.", "The user's office is in Porto."]


def test_recall_labels_both_sides_of_an_undecided_contradiction_contested(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    tea = bench.remember("The user prefers tea in the morning.")
    coffee = bench.remember("The user prefers coffee in the morning.")
    bench.stores.records.apply(SCOPE, resolve_contradiction((tea, coffee), None))

    block = recall(
        SCOPE,
        RecallQuery(text="what does the user drink in the morning"),
        stores=bench.stores,
        embedder=None,
        clock=bench.clock,
    ).block

    lines = [line for line in block.splitlines() if "prefers" in line]
    assert len(lines) == 2
    assert all("| trusted | contested |" in line for line in lines)
