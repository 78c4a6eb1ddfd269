"""Memory configurations: stored exactly, names unique, changes checked against the revision."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cairn.errors import ConflictError, MemoryNameTakenError, MemoryNotFoundError
from cairn.memories import PromptOverride, StrategyConfig, StrategyKind
from cairn.ports import Stores
from cairn.record_schemas import FieldValidation, MetadataField, RecordSchema
from tests.conformance.api_state import T0, memory, require_memories


def test_a_memory_round_trips_exactly(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)
    given = memory(description="support bot memory")

    memories.create(given)

    assert memories.get(given.memory_id) == given


def test_a_strategy_with_a_prompt_override_round_trips_exactly(
    stores: Stores, backend_name: str
) -> None:
    memories = require_memories(stores, backend_name)
    override = StrategyConfig(
        strategy_id="travel-AbCdEf1234",
        name="travel",
        kind=StrategyKind.CUSTOM,
        namespace_template="/travel/{actorId}/",
        extraction_prompt="Only keep facts about travel.",
        override=PromptOverride(
            base=StrategyKind.SEMANTIC,
            extraction_model="my-model",
            consolidation_prompt="Merge travel facts.",
            consolidation_model="my-model",
        ),
        created_at=T0,
        updated_at=T0,
    )
    given = memory(strategies=(override,))

    memories.create(given)

    assert memories.get(given.memory_id) == given


def test_an_episodic_strategy_and_a_record_schema_round_trip_exactly(
    stores: Stores, backend_name: str
) -> None:
    memories = require_memories(stores, backend_name)
    episodic = StrategyConfig(
        strategy_id="journeys-AbCdEf1234",
        name="journeys",
        kind=StrategyKind.EPISODIC,
        namespace_template="/journeys/{actorId}/{sessionId}/",
        reflection_template="/journeys/{actorId}/",
        created_at=T0,
        updated_at=T0,
    )
    rating = MetadataField(
        key="stars",
        type="NUMBER",
        definition="The rating the user gave",
        validation=FieldValidation(kind="numberValidation", min_value=1.0, max_value=5.0),
    )
    facts = (
        memory()
        .strategies[0]
        .model_copy(
            update={"record_schema": RecordSchema(fields=(rating, MetadataField(key="channel")))}
        )
    )
    given = memory(strategies=(facts, episodic))

    memories.create(given)

    assert memories.get(given.memory_id) == given


def test_a_taken_name_is_refused_and_changes_nothing(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)
    first = memory()
    memories.create(first)

    with pytest.raises(MemoryNameTakenError, match="already exists"):
        memories.create(memory(suffix="ZyXwVu9876"))

    assert [m.memory_id for m in memories.list_memories().items] == [first.memory_id]


def test_a_deleted_memory_is_gone_and_frees_its_name(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)
    first = memory()
    memories.create(first)

    memories.delete(first.memory_id)

    with pytest.raises(MemoryNotFoundError):
        memories.get(first.memory_id)
    with pytest.raises(MemoryNotFoundError):
        memories.delete(first.memory_id)
    memories.create(memory(suffix="ZyXwVu9876"))


def test_replace_applies_only_over_the_revision_it_read(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)
    original = memory()
    memories.create(original)
    later = T0 + timedelta(hours=1)
    first_edit = original.revised(later, description="first")
    memories.replace(first_edit, expected_revision=original.revision)

    with pytest.raises(ConflictError):
        memories.replace(original.revised(later, description="stale"), expected_revision=1)

    stored = memories.get(original.memory_id)
    assert stored == first_edit
    assert (stored.revision, stored.description, stored.updated_at) == (2, "first", later)


def test_replacing_a_missing_memory_is_not_found(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)

    with pytest.raises(MemoryNotFoundError):
        memories.replace(memory().revised(T0), expected_revision=1)


def test_memories_are_listed_by_id_across_pages(stores: Stores, backend_name: str) -> None:
    memories = require_memories(stores, backend_name)
    created = [memory(name=f"mem{i}", suffix=f"{i}bcdefghij") for i in (3, 1, 2)]
    for each in created:
        memories.create(each)

    first = memories.list_memories(limit=2)
    assert first.next_cursor is not None
    second = memories.list_memories(limit=2, cursor=first.next_cursor)

    listed = [m.memory_id for m in (*first.items, *second.items)]
    assert listed == sorted(m.memory_id for m in created)
    assert second.next_cursor is None
