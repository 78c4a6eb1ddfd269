"""learn and memory_edit: what they write, with which provenance, and what they refuse; both
declare that they need the host's permission gate, in every host format."""

from __future__ import annotations

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind, Status, Trust
from cairn.ports import Stores
from cairn.runtime import MemorySession, Run, SessionOptions
from cairn.runtime.tool_definitions import DEFINITIONS, ToolOutcome
from cairn.runtime.tool_formats import converse_tool_result, mcp_annotations, openai_tool_message
from cairn.testing import HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-1", actor_id="tg:42")


@pytest.fixture
def stores() -> Stores:
    return InMemoryBackend(FixedClock()).stores()


def _run(stores: Stores, **options: object) -> Run:
    session = MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=HashingEmbedder(),
        options=SessionOptions.model_validate(options),
    )
    return session.start_run("hello")


def _stated(stores: Stores, text: str, kind: SourceKind = SourceKind.USER) -> str:
    record = NewRecord(
        namespace="/facts/tg:42/",
        content=text,
        confidence=0.9,
        sources=(Source(kind=kind, run_id="earlier-run"),),
    )
    (written,) = stores.records.apply(SCOPE, [Create(record=record)])
    return written.record_id


def _inferred(stores: Stores, text: str) -> str:
    """A record the model filed earlier: the model's tools may edit and retract it."""
    return _stated(stores, text, SourceKind.MODEL)


def test_a_lesson_is_model_sourced_untrusted_and_cites_its_run(stores: Stores) -> None:
    run = _run(stores)
    outcome = run.tools.call("learn", {"lesson": "Run migrations first.", "tags": ["deploy"]})
    assert outcome.ok
    version = stores.records.get(SCOPE, outcome.content["record_id"])
    assert version.category == "lesson"
    assert version.trust is Trust.UNTRUSTED
    assert version.confidence < 0.9  # ranked below what the user stated
    (source,) = version.sources
    assert (source.kind, source.session_id, source.run_id) == (SourceKind.MODEL, "s1", run.run_id)
    assert version.tags == ("deploy",)
    assert version.embedding is not None  # filed with a vector, so recall finds it by meaning


def test_learning_the_same_lesson_again_confirms_it_instead_of_duplicating(stores: Stores) -> None:
    first = _run(stores).tools.call("learn", {"lesson": "Run migrations first."})
    again = _run(stores).tools.call("learn", {"lesson": "run   MIGRATIONS first."})
    assert again.content["record_id"] == first.content["record_id"]
    assert again.content["confirmed_existing"] is True
    # The model re-filing what it can read is no evidence: only independent evidence confirms.
    assert stores.records.get(SCOPE, first.content["record_id"]).seen_count == 1
    assert len(stores.records.list_records(SCOPE).items) == 1


def test_a_lesson_over_2000_bytes_is_refused(stores: Stores) -> None:
    outcome = _run(stores).tools.call("learn", {"lesson": "ß" * 1001})
    assert not outcome.ok
    assert "2002 bytes" in outcome.content["error"]
    assert stores.records.list_records(SCOPE).items == ()


def test_update_writes_a_new_version_of_the_same_record_and_keeps_the_old(stores: Stores) -> None:
    record_id = _inferred(stores, "The user's office is in Lisbon.")
    run = _run(stores)
    outcome = run.tools.call(
        "memory_edit",
        {"action": "update", "record_id": record_id, "content": "The user's office is in Porto."},
    )
    assert outcome.ok
    assert (outcome.content["record_id"], outcome.content["version"]) == (record_id, 2)
    old, new = stores.records.history(SCOPE, record_id)
    assert old.content == "The user's office is in Lisbon."
    assert new.content == "The user's office is in Porto."
    # An edit by the model makes the record untrusted for good: trust never rises.
    assert new.trust is Trust.UNTRUSTED
    assert new.sources[-1].run_id == run.run_id


@pytest.mark.parametrize("action", ["forget", "invalidate"])
def test_forget_and_invalidate_retract_softly_and_recall_stops_returning_it(
    stores: Stores, action: str
) -> None:
    record_id = _inferred(stores, "The user's office is in Lisbon.")
    run = _run(stores)
    outcome = run.tools.call(
        "memory_edit", {"action": action, "record_id": record_id, "reason": "moved offices"}
    )
    assert outcome.ok
    head = stores.records.get(SCOPE, record_id)
    assert head.status is Status.RETRACTED
    assert head.content == "The user's office is in Lisbon."  # soft: the content is kept
    assert head.metadata["retract_reason"].startswith(action)
    assert "moved offices" in head.metadata["retract_reason"]
    found = _run(stores).tools.call("memory_recall", {"query": "user office Lisbon"})
    assert found.content["results"] == []


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"action": "update"}, "update needs content"),
        ({"action": "forget", "content": "x"}, "forget takes no content"),
        ({"action": "rewrite", "content": "x"}, "action"),
        ({"action": "update", "content": "   "}, "content must contain words"),
    ],
)
def test_an_edit_that_does_not_say_what_to_do_is_refused(
    stores: Stores, arguments: dict[str, str], complaint: str
) -> None:
    record_id = _stated(stores, "The user's office is in Lisbon.")
    outcome = _run(stores).tools.call("memory_edit", {**arguments, "record_id": record_id})
    assert not outcome.ok
    assert complaint in outcome.content["error"]
    assert len(stores.records.history(SCOPE, record_id)) == 1


def test_a_retracted_record_cannot_be_edited_again(stores: Stores) -> None:
    record_id = _inferred(stores, "The user's office is in Lisbon.")
    run = _run(stores)
    run.tools.call("memory_edit", {"action": "forget", "record_id": record_id})
    outcome = run.tools.call(
        "memory_edit", {"action": "update", "record_id": record_id, "content": "Porto."}
    )
    assert not outcome.ok
    assert "retracted" in outcome.content["error"]


def test_memory_edit_is_not_offered_when_the_host_withholds_curation(stores: Stores) -> None:
    record_id = _stated(stores, "The user's office is in Lisbon.")
    run = _run(stores, curate=False)
    assert [d.name for d in run.tools.definitions] == ["learn", "memory_recall"]
    outcome = run.tools.call("memory_edit", {"action": "forget", "record_id": record_id})
    assert not outcome.ok
    assert "no tool named 'memory_edit'" in outcome.content["error"]
    assert stores.records.get(SCOPE, record_id).status is Status.ACTIVE


def test_tools_that_write_durable_state_declare_the_permission_gate() -> None:
    assert DEFINITIONS["learn"].needs_permission
    assert DEFINITIONS["memory_edit"].needs_permission
    assert not DEFINITIONS["memory_recall"].needs_permission
    assert mcp_annotations(DEFINITIONS["memory_recall"])["readOnlyHint"] is True
    assert mcp_annotations(DEFINITIONS["learn"])["readOnlyHint"] is False
    assert mcp_annotations(DEFINITIONS["memory_edit"])["destructiveHint"] is True


def test_converse_and_openai_formats_carry_the_same_plain_schemas(stores: Stores) -> None:
    tools = _run(stores).tools
    converse = tools.converse_tool_config()
    assert converse is not None
    specs = {t["toolSpec"]["name"]: t["toolSpec"] for t in converse["tools"]}
    functions = {t["function"]["name"]: t["function"] for t in tools.openai_tools()}
    assert set(specs) == set(functions) == {"learn", "memory_edit", "memory_recall"}
    for name, spec in specs.items():
        schema = spec["inputSchema"]["json"]
        assert functions[name]["parameters"] == schema
        assert functions[name]["description"] == spec["description"]
        text = str(schema)
        assert "title" not in text
        assert "anyOf" not in text
        assert "actor" not in text
        assert "memory_id" not in text
    edit = specs["memory_edit"]["inputSchema"]["json"]
    assert edit["properties"]["content"] == {
        "type": "string",
        "maxLength": 2000,
        "description": edit["properties"]["content"]["description"],
    }
    assert edit["properties"]["action"]["enum"] == ["update", "forget", "invalidate"]


def test_outcomes_become_tool_results_with_the_right_status() -> None:
    failed = ToolOutcome.failed("record 'x' does not exist in this scope")
    result = converse_tool_result("tooluse_1", failed)["toolResult"]
    assert result == {
        "toolUseId": "tooluse_1",
        "content": [{"json": {"error": "record 'x' does not exist in this scope"}}],
        "status": "error",
    }
    message = openai_tool_message("call_1", ToolOutcome(ok=True, content={"results": []}))
    assert message == {"role": "tool", "tool_call_id": "call_1", "content": '{"results": []}'}


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "update", "content": "No known drug allergies."},
        {"action": "forget"},
        {"action": "invalidate", "reason": "chart updated"},
    ],
)
def test_the_model_never_edits_or_retracts_what_the_user_stated(
    stores: Stores, arguments: dict[str, str]
) -> None:
    record_id = _stated(stores, "Allergic to penicillin.")

    outcome = _run(stores).tools.call("memory_edit", {**arguments, "record_id": record_id})

    assert not outcome.ok
    assert "stated by the user" in outcome.content["error"]
    (only,) = stores.records.history(SCOPE, record_id)
    assert (only.content, only.status, only.trust) == (
        "Allergic to penicillin.",
        Status.ACTIVE,
        Trust.TRUSTED,
    )


def test_twenty_echoes_of_a_recalled_record_do_not_confirm_it(stores: Stores) -> None:
    first = _run(stores).tools.call("learn", {"lesson": "Deploy on Fridays."})
    for _ in range(20):
        run = _run(stores)
        run.tools.call("learn", {"lesson": "Deploy on Fridays."})

    head = stores.records.get(SCOPE, first.content["record_id"])
    assert (head.seen_count, head.last_seen_at) == (1, head.first_seen_at)
