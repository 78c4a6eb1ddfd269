"""Record placements: located by id within a memory, actors found by namespace prefix."""

from __future__ import annotations

import pytest

from cairn.errors import RecordNotFoundError
from cairn.models import Scope
from cairn.ports import RecordPlacement, Stores
from tests.conformance.api_state import require_directory

R1 = "mem-" + "1" * 36
R2 = "mem-" + "2" * 36
R3 = "mem-" + "3" * 36


def placed(record_id: str, actor: str, namespace: str) -> RecordPlacement:
    return RecordPlacement(record_id=record_id, actor_id=actor, namespace=namespace)


def test_a_placed_record_is_located_in_its_memory_only(stores: Stores, backend_name: str) -> None:
    directory = require_directory(stores, backend_name)
    directory.place("m1", [placed(R1, "user/a1", "/facts/user/a1/")])

    assert directory.locate("m1", R1) == placed(R1, "user/a1", "/facts/user/a1/")
    with pytest.raises(RecordNotFoundError):
        directory.locate("m2", R1)
    with pytest.raises(RecordNotFoundError):
        directory.locate("m1", R2)


def test_placing_again_overwrites(stores: Stores, backend_name: str) -> None:
    directory = require_directory(stores, backend_name)
    directory.place("m1", [placed(R1, "a1", "/facts/a1/")])

    directory.place("m1", [placed(R1, "a2", "/facts/a2/")])

    assert directory.locate("m1", R1).actor_id == "a2"
    assert directory.actors("m1") == ("a2",)


def test_actors_under_a_prefix_respect_segment_boundaries(
    stores: Stores, backend_name: str
) -> None:
    directory = require_directory(stores, backend_name)
    directory.place(
        "m1",
        [
            placed(R1, "a1", "/facts/a1/"),
            placed(R2, "a10", "/facts/a10/"),
            placed(R3, "b", "/prefs/b/"),
        ],
    )
    directory.place("m2", [placed(R1, "z", "/facts/z/")])

    assert directory.actors("m1") == ("a1", "a10", "b")
    assert directory.actors("m1", namespace_prefix="/facts/") == ("a1", "a10")
    assert directory.actors("m1", namespace_prefix="/facts/a1") == ("a1",)
    assert directory.actors("m1", namespace_prefix="/facts/a1/") == ("a1",)
    assert directory.actors("m1", namespace_prefix="/") == ("a1", "a10", "b")
    assert directory.actors("m1", namespace_prefix="/nothing/") == ()


def test_erasing_a_scope_forgets_its_placements_only(stores: Stores, backend_name: str) -> None:
    directory = require_directory(stores, backend_name)
    directory.place("m1", [placed(R1, "a1", "/f/a1/"), placed(R2, "a2", "/f/a2/")])
    directory.place("m2", [placed(R3, "a1", "/f/a1/")])

    assert directory.erase_scope(Scope(memory_id="m1", actor_id="a1")) == 1

    with pytest.raises(RecordNotFoundError):
        directory.locate("m1", R1)
    assert directory.locate("m1", R2).actor_id == "a2"
    assert directory.locate("m2", R3).actor_id == "a1"
