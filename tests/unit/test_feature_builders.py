"""The features' own builders, the one place the extraction consumer and the consolidator are
wired (the embedded system and the Lambdas both call them): what they resolve, what they refuse."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.consolidate.commit import build_consolidator
from cairn.embed.hashing import HashingEmbedder
from cairn.errors import ConfigurationError
from cairn.extract.delivery import build_consumer
from cairn.extract.triggers import embedded_memory
from cairn.local import FilesystemStagingStore, offline_model
from cairn.store.memory import InMemoryBackend


def test_a_memory_nobody_configured_resolves_to_the_built_in_strategies_a_stored_one_as_stored(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    stores = InMemoryBackend(clock).stores()
    assert stores.memories is not None
    configured = embedded_memory("configured").model_copy(update={"name": "configured"})
    stores.memories.create(configured)
    staging = FilesystemStagingStore(tmp_path / "staging")

    consumer = build_consumer(
        stores, staging, model=offline_model(), embedder=HashingEmbedder(), clock=clock
    )
    consolidator = build_consolidator(stores, staging, model=offline_model(), clock=clock)

    assert consolidator.memories is not None
    for resolve in (consumer.memories, consolidator.memories):
        assert resolve("configured") == configured
        assert resolve("unconfigured") == embedded_memory("unconfigured")
    assert consumer.rollouts is stores.rollouts
    assert (consumer.staging, consolidator.staging) == (staging, staging)


def test_a_store_without_a_rollout_index_is_refused_with_what_to_use_instead(
    tmp_path: Path,
) -> None:
    clock = FixedClock()
    stores = dataclasses.replace(InMemoryBackend(clock).stores(), rollouts=None)

    with pytest.raises(ConfigurationError, match=r"no rollout index.*SQLite or DynamoDB"):
        build_consumer(
            stores,
            FilesystemStagingStore(tmp_path / "staging"),
            model=offline_model(),
            embedder=None,
            clock=clock,
        )
