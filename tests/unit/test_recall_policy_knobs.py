"""A policy's knobs are worked out once per policy object, and only ever its own."""

from __future__ import annotations

import gc

from cairn.recall import RecallPolicy
from cairn.recall.query import DEFAULT_POLICY


def test_knobs_are_every_field_as_dumped() -> None:
    policy = RecallPolicy(max_block_bytes=3000)
    assert policy.knobs() == policy.model_dump()
    assert policy.knobs() == policy.model_dump()  # asked again: the kept ones


def test_a_copy_with_other_knobs_reads_its_own() -> None:
    DEFAULT_POLICY.knobs()
    wider = DEFAULT_POLICY.model_copy(update={"max_block_bytes": 5000})

    assert wider.knobs()["max_block_bytes"] == 5000
    assert DEFAULT_POLICY.knobs()["max_block_bytes"] == 4096


def test_changing_the_answer_changes_nothing_kept() -> None:
    knobs = DEFAULT_POLICY.knobs()
    knobs["max_block_bytes"] = 1

    assert DEFAULT_POLICY.knobs()["max_block_bytes"] == 4096


def test_a_policy_made_where_a_collected_one_was_reads_its_own() -> None:
    # CPython reuses a collected object's address (its id) for the next object of its size.
    seen: dict[int, int] = {}
    for budget in range(2000, 2200):
        policy = RecallPolicy(max_block_bytes=budget)
        assert policy.knobs()["max_block_bytes"] == budget
        seen[id(policy)] = seen.get(id(policy), 0) + 1
        del policy
        gc.collect(0)
    assert max(seen.values()) > 1  # an id was reused: the check above ran on a reused one
