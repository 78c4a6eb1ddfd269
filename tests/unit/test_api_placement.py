"""Reading the actor out of a namespace through a memory's templates (namespace_actors)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.errors import InvalidInputError
from cairn.memories import MemoryConfig, StrategyConfig, StrategyKind, memory_arn
from cairn.models import ACTOR_ID_PATTERN
from cairn.namespace_actors import (
    SHARED_ACTOR_ID,
    AmbiguousNamespaceError,
    actor_of,
    prefix_reads_actor,
    refuse_nested_namespace,
    refuse_reserved_actor,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def memory(*templates: str) -> MemoryConfig:
    strategies = tuple(
        StrategyConfig(
            strategy_id=f"s{i}-AbCdEf{i:04d}",
            name=f"s{i}",
            kind=StrategyKind.SEMANTIC,
            namespace_template=template,
            created_at=T0,
            updated_at=T0,
        )
        for i, template in enumerate(templates)
    )
    return MemoryConfig(
        memory_id="m-abcdefghij",
        arn=memory_arn("us-east-1", "000000000000", "m-abcdefghij"),
        name="m",
        event_expiry_days=7,
        created_at=T0,
        updated_at=T0,
        strategies=strategies,
    )


@pytest.mark.parametrize(
    ("template", "namespace", "actor"),
    [
        ("/facts/{actorId}/", "/facts/a1/", "a1"),
        ("/facts/{actorId}/", "/facts/user/a1/", "user/a1"),
        ("/facts/{actorId}", "/facts/tg:42/", "tg:42"),
        ("/summaries/{actorId}/{sessionId}/", "/summaries/user/a1/s-9/", "user/a1"),
        (
            "/strategies/{memoryStrategyId}/actors/{actorId}/",
            "/strategies/s0-AbCdEf0000/actors/a1/",
            "a1",
        ),
        ("/strategies/{memoryStrategyId}/actors/{actorId}/", "/strategies/other/actors/a1/", None),
        ("/teams/{team}/{actorId}/", "/teams/blue/a1/", "a1"),
        ("/facts/{actorId}/", "/facts/", None),
        ("/facts/", "/facts/a1/", None),
        ("/x/{actorId}/{actorId}/", "/x/a1/a2/", None),
        ("/x/{actorId}/{actorId}/", "/x/a1/a1/", "a1"),
    ],
)
def test_the_template_names_the_actor(template: str, namespace: str, actor: str | None) -> None:
    assert actor_of(memory(template), namespace) == actor


def test_a_named_strategy_reads_only_its_own_template() -> None:
    both = memory("/a/{actorId}/", "/b/{actorId}/")

    assert actor_of(both, "/b/u1/") == "u1"
    assert actor_of(both, "/b/u1/", "s0-AbCdEf0000") is None
    assert actor_of(both, "/b/u1/", "unknown-strategy") == "u1"


ACTORS = st.from_regex(ACTOR_ID_PATTERN, fullmatch=True).filter(lambda a: len(a) <= 255)


@given(actor=ACTORS)
def test_a_filled_template_gives_back_its_actor(actor: str) -> None:
    config = memory("/users/{actorId}/facts/", "/summaries/{actorId}/{sessionId}/")

    assert actor_of(config, f"/users/{actor}/facts/") == actor


def test_only_one_trailing_slash_is_dropped_so_nested_ids_stay_apart() -> None:
    config = memory("/facts/{actorId}/")

    assert actor_of(config, "/facts/u1/") == "u1"
    assert actor_of(config, "/facts/u1") == "u1"
    assert actor_of(config, "/facts/u1//") == "u1/"
    assert actor_of(config, "/facts/u1/x/") == "u1/x"


def test_a_template_that_reads_two_actors_out_of_one_namespace_refuses_it() -> None:
    with pytest.raises(AmbiguousNamespaceError, match=r"'a'.*'a-b'"):
        actor_of(memory("/x/{actorId}-{team}/"), "/x/a-b-c/")
    assert actor_of(memory("/x/{actorId}-{team}/"), "/x/a-b/") == "a"


def test_two_templates_that_read_different_actors_refuse_the_namespace() -> None:
    config = memory("/f/{actorId}/", "/f/{actorId}/notes/")

    with pytest.raises(AmbiguousNamespaceError, match="memoryStrategyId"):
        actor_of(config, "/f/u1/notes/")
    assert actor_of(config, "/f/u1/notes/", "s1-AbCdEf0001") == "u1"
    assert actor_of(config, "/f/u1/notes/", "s0-AbCdEf0000") == "u1/notes"


def test_a_namespace_naming_the_reserved_actor_is_refused() -> None:
    with pytest.raises(AmbiguousNamespaceError, match="reserved"):
        actor_of(memory("/facts/{actorId}/"), "/facts/cairn:shared/")
    with pytest.raises(InvalidInputError, match="reserved"):
        refuse_reserved_actor(SHARED_ACTOR_ID)
    refuse_reserved_actor("tg:42")


@pytest.mark.parametrize(
    ("prefix", "actor", "reads"),
    [
        ("/facts/u1/", "u1/x", False),
        ("/facts/u1", "u1/x", False),
        ("/facts/u1/", "u1/", False),
        ("/facts/u1//", "u1/", True),
        ("/facts/u1/x/", "u1/x", True),
        ("/facts/u1/x/", "u1/x/y", False),
        ("/facts/", "u1/x", True),
        ("/", "u1/x", True),
        ("/facts/u1/", "u1", True),
        ("/summaries/u1/", "u1/x", False),
        ("/summaries/u1/x/s1/", "u1/x", True),
    ],
)
def test_a_prefix_that_stops_inside_an_actor_id_never_reads_that_actor(
    prefix: str, actor: str, reads: bool
) -> None:
    config = memory("/facts/{actorId}/", "/summaries/{actorId}/{sessionId}/")

    assert prefix_reads_actor(config, prefix, actor) is reads


def test_an_episodic_strategy_s_reflection_namespace_names_its_actor() -> None:
    episodic = StrategyConfig(
        strategy_id="ep-AbCdEf0000",
        name="ep",
        kind=StrategyKind.EPISODIC,
        namespace_template="/episodes/{actorId}/sessions/{sessionId}/",
        reflection_template="/episodes/{actorId}/",
        created_at=T0,
        updated_at=T0,
    )
    config = memory().model_copy(update={"strategies": (episodic,)})

    assert actor_of(config, "/episodes/user/a1/sessions/s-1/") == "user/a1"
    assert actor_of(config, "/episodes/user/a1/") == "user/a1"


def test_an_actor_whose_reflections_would_sit_in_another_s_episode_namespace_is_refused() -> None:
    episodic = StrategyConfig(
        strategy_id="ep-AbCdEf0000",
        name="ep",
        kind=StrategyKind.EPISODIC,
        namespace_template="/episodes/{actorId}/sessions/{sessionId}/",
        reflection_template="/episodes/{actorId}/",
        created_at=T0,
        updated_at=T0,
    )
    config = memory().model_copy(update={"strategies": (episodic,)})

    refuse_nested_namespace(config, "/episodes/a1/sessions/s-1/", "a1")  # a1's own episodes
    with pytest.raises(AmbiguousNamespaceError, match="'a1'"):
        refuse_nested_namespace(config, "/episodes/a1/sessions/s-1/", "a1/sessions/s-1")
