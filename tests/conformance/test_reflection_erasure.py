"""A reflection carries its members' content, so erasing a member or the actor erases it: no
byte of the member's words is left in the store (``cairn.erasure_lineage``, step 5)."""

from __future__ import annotations

import json
from pathlib import Path

from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.erasure_lineage import erase_record
from cairn.history.reflection import run_reflection_job
from cairn.local import offline_model
from cairn.model_request import ModelRequest
from cairn.models import Status
from cairn.ports import Stores
from cairn.reflection_records import made_from
from cairn.testing import ScriptedModel
from tests.conformance.samples import SCOPE
from tests.conformance.test_erase_races import stored_bytes
from tests.conformance.test_reflection_job import EMBED, NEAR, reflections, remember, switch_on

SECRET = "Zephyrine Quillfeather"  # noqa: S105 (a phrase to scan for, not a password)


def reflected(stores: Stores, clock: FixedClock) -> tuple[str, str, str]:
    """Two members, one naming ``SECRET``, and their reflection (the offline, extractive one):
    the ids of the secret member, the other member and the reflection."""
    switch_on(stores)
    secret = remember(stores, f"The hives were a gift from {SECRET}", NEAR[0], entities=("bees",))
    other = remember(stores, "The hives stand by the orchard", NEAR[1], entities=("bees",))
    run_reflection_job(stores, offline_model(), "m1", embedder=EMBED, clock=clock)
    (made,) = reflections(stores)
    assert SECRET in made.content
    assert set(made_from(made)) == {secret.record_id, other.record_id}
    return secret.record_id, other.record_id, made.record_id


def test_erasing_a_member_erases_its_reflection_and_its_links(
    backend_name: str, stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    secret, other, made = reflected(stores, clock)

    erased = erase_record(stores, SCOPE, secret, staging=None, clock=clock)

    assert made in erased.restating
    for record_id in (secret, made):
        assert all(v.status is Status.ERASED for v in stores.records.history(SCOPE, record_id))
    assert stores.records.get(SCOPE, other).status is Status.ACTIVE
    assert stores.links is not None
    assert stores.links.links_of(SCOPE, other) == ()  # its link went with the reflection
    if backend_name != "memory":
        assert SECRET.encode() not in stored_bytes(backend_name, tmp_path)


def test_erasing_the_actor_leaves_no_byte_of_a_reflection(
    backend_name: str, stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    reflected(stores, clock)
    if backend_name != "memory":
        assert SECRET.encode() in stored_bytes(backend_name, tmp_path)

    erase_actor(stores, SCOPE, staging=None)

    assert reflections(stores) == []
    if backend_name != "memory":
        assert SECRET.encode() not in stored_bytes(backend_name, tmp_path)


def test_a_member_erased_while_the_model_reflects_is_never_written_back(
    backend_name: str, stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    switch_on(stores)
    secret = remember(stores, f"The hives were a gift from {SECRET}", NEAR[0], entities=("bees",))
    remember(stores, "The hives stand by the orchard", NEAR[1], entities=("bees",))

    def erase_then_answer(request: ModelRequest) -> str:
        erase_record(stores, SCOPE, secret.record_id, staging=None, clock=clock)
        return json.dumps({"reflections": [{"insight": f"Bees from {SECRET}.", "cites": [1, 2]}]})

    run = run_reflection_job(
        stores, ScriptedModel([erase_then_answer]), "m1", embedder=EMBED, clock=clock
    )

    assert reflections(stores) == []
    assert "1× cluster(s) not reflected: an erasure in the scope committed meanwhile" in run.reasons
    if backend_name != "memory":
        assert SECRET.encode() not in stored_bytes(backend_name, tmp_path)
