"""Which actors of a memory hold records, on every backend (issue 17, class 7): what erasing a
whole memory (DeleteMemory) must reach, including records no event or API placement names
(``cairn remember`` into an API memory)."""

from __future__ import annotations

from cairn.clock import FixedClock
from cairn.models import Scope, Status
from cairn.ports import Stores
from tests.conformance.samples import OTHER_ACTOR, OTHER_MEMORY, SCOPE, create
from tests.unit.api_harness import Caller, build_api, create_memory

SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password


def test_every_actor_holding_a_record_in_the_memory_is_listed_once(stores: Stores) -> None:
    assert stores.records.actors(SCOPE.memory_id) == ()
    create(stores, "The user likes tea")
    create(stores, "The user likes jazz")
    create(stores, "Another user likes chess", scope=OTHER_ACTOR)
    create(stores, "Someone elsewhere", scope=OTHER_MEMORY)

    assert stores.records.actors(SCOPE.memory_id) == tuple(
        sorted({SCOPE.actor_id, OTHER_ACTOR.actor_id})
    )
    assert stores.records.actors(OTHER_MEMORY.memory_id) == (OTHER_MEMORY.actor_id,)


def test_an_erased_scope_is_no_longer_listed(stores: Stores) -> None:
    create(stores, "The user likes tea")
    create(stores, "Another user likes chess", scope=OTHER_ACTOR)

    stores.records.erase_scope(SCOPE)

    assert stores.records.actors(SCOPE.memory_id) == (OTHER_ACTOR.actor_id,)


def test_delete_memory_erases_a_record_no_event_or_placement_names(
    stores: Stores, clock: FixedClock
) -> None:
    call = Caller(build_api(stores, clock))
    memory = create_memory(call)
    scope = Scope(memory_id=memory["id"], actor_id="tg:7")
    # What `cairn remember --memory <id> --actor tg:7` files: a record, no event, no placement.
    remembered = create(stores, SECRET, scope=scope, namespace="/facts/tg:7/")

    assert call("DELETE", f"/memories/{memory['id']}/delete").status == 202

    (tombstone,) = stores.records.history(scope, remembered.record_id)
    assert tombstone.status is Status.ERASED
    assert SECRET not in tombstone.model_dump_json()
