"""Run evidence: bounded (32 messages within 32 KB, an 8 KB answer), hashed a message at a time,
staged once per run, and never able to fail the agent's answer."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cairn.consolidate.evidence import (
    MAX_ANSWER_BYTES,
    MAX_MESSAGES,
    MAX_MESSAGES_BYTES,
    RunIdentity,
    TranscriptMessage,
    build_evidence,
    decode_evidence,
    encode_evidence,
)
from cairn.consolidate.failures import ConsolidationFailure
from cairn.errors import InvalidInputError, StoreUnavailableError
from cairn.extract.delivery import Consumer, consume
from cairn.extract.triggers import embedded_memory
from cairn.models import Role, Scope
from cairn.rollout.index import RolloutState
from cairn.rollout.payload import RolloutNotice
from cairn.runtime.converse import ConverseAgent, allow_all
from cairn.runtime.session import MemorySession
from cairn.testing.scripted_converse import ScriptedConverse, say, use_tool
from tests.unit.consolidation_support import SCOPE, Bench, evidence_of

RUN = RunIdentity(
    scope=SCOPE,
    session_id="s1",
    run_id="run-1",
    rollout_id="ev-20260101T000000000000-000000000001",
    completed_at=datetime(2026, 1, 1, tzinfo=UTC),
)


def _said(count: int, size: int = 10) -> Iterator[TranscriptMessage]:
    for n in range(count):
        role = Role.USER if n % 2 == 0 else Role.ASSISTANT
        yield TranscriptMessage(role=role, text=f"{n:06d}" + "x" * max(0, size - 6))


def _text_bytes(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


def test_a_long_run_keeps_its_newest_32_messages() -> None:
    payload = build_evidence(RUN, _said(1000), "done")

    assert len(payload.messages) == MAX_MESSAGES
    assert [m.index for m in payload.messages] == list(range(1000 - MAX_MESSAGES, 1000))
    assert payload.transcript_messages == 1000


def test_large_messages_fit_32_kb_in_all_and_the_answer_8_kb() -> None:
    payload = build_evidence(RUN, _said(40, size=3000), "é" * 10_000)

    texts = [m.text for m in payload.messages]
    assert _text_bytes(texts) <= MAX_MESSAGES_BYTES
    assert len(texts) == MAX_MESSAGES_BYTES // 3000  # the newest that fit whole
    assert payload.messages[-1].index == 39
    assert payload.final_answer is not None
    assert len(payload.final_answer.encode("utf-8")) <= MAX_ANSWER_BYTES
    assert payload.final_answer_truncated


def test_one_huge_message_is_cut_and_its_digest_is_of_the_whole() -> None:
    huge = "ü" * 50_000
    payload = build_evidence(RUN, [TranscriptMessage(role=Role.USER, text=huge)], None)

    (message,) = payload.messages
    assert message.truncated
    assert huge.startswith(message.text.removesuffix("…"))
    assert message.sha256 == hashlib.sha256(huge.encode("utf-8")).hexdigest()


def test_tool_call_annotations_are_joined_once_before_the_cut() -> None:
    text = "a" * 20_000
    calls = ("memory_recall", "learn")
    payload = build_evidence(
        RUN, [TranscriptMessage(role=Role.ASSISTANT, text=text, tool_calls=calls)], None
    )

    (message,) = payload.messages
    joined = f"{text}\n[tool calls: memory_recall, learn]"
    assert message.sha256 == hashlib.sha256(joined.encode("utf-8")).hexdigest()
    assert message.text.count("[tool calls") == 0  # cut after joining, not re-appended
    short = build_evidence(
        RUN, [TranscriptMessage(role=Role.USER, text="hi", tool_calls=calls)], None
    )
    assert short.messages[0].text == "hi\n[tool calls: memory_recall, learn]"


def test_the_transcript_is_hashed_one_message_at_a_time_over_all_of_it() -> None:
    whole = build_evidence(RUN, _said(100), None)
    changed_early = list(_said(100))
    changed_early[3] = TranscriptMessage(role=Role.ASSISTANT, text="edited")

    other = build_evidence(RUN, changed_early, None)

    # The early message is outside the kept window, and still changes the transcript digest.
    assert [m.text for m in other.messages] == [m.text for m in whole.messages]
    assert other.transcript_sha256 != whole.transcript_sha256


def test_the_final_answer_is_staged_once() -> None:
    transcript = [
        TranscriptMessage(role=Role.USER, text="What is the capital of Peru?"),
        TranscriptMessage(role=Role.ASSISTANT, text="Lima."),
    ]
    payload = build_evidence(RUN, transcript, "Lima.")

    assert [m.text for m in payload.messages] == ["What is the capital of Peru?"]
    assert payload.final_answer == "Lima."


def test_encoding_is_canonical_and_round_trips() -> None:
    payload = build_evidence(RUN, _said(5), "ok")

    assert encode_evidence(payload) == encode_evidence(decode_evidence(encode_evidence(payload)))
    with pytest.raises(InvalidInputError):
        decode_evidence(b'{"schema": "cairn.rollout/1"}')


def test_staging_stores_a_pending_evidence_rollout_and_announces_it(tmp_path: Path) -> None:
    bench = Bench(tmp_path)

    rollout = bench.run("I prefer tea.")

    assert rollout.state is RolloutState.ANNOUNCED
    assert bench.notifier.announced == [(SCOPE, rollout.rollout_id)]
    assert bench.pending() == [rollout.rollout_id]
    assert evidence_of(bench, rollout).messages[0].text == "I prefer tea."


def _session(
    bench: Bench, errors: list[ConsolidationFailure], stage: object = None
) -> MemorySession:
    return MemorySession.local(
        bench.stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        clock=bench.clock,
        evidence=stage or bench.stager.stage,  # type: ignore[arg-type]
        on_consolidation_error=errors.append,
    )


def test_a_completed_root_run_stages_its_evidence_once_under_one_rollout_id(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    run = _session(bench, []).start_run("hello")
    run.add_turn("USER", "I switched to coffee in March.")
    run.add_turn("ASSISTANT", "Coffee it is.", tool_calls=["learn"])

    first = run.complete("Coffee it is.")
    again = run.complete("Coffee it is.")

    assert first is not None
    assert first == again
    assert bench.pending() == [first]
    assert len(bench.notifier.announced) == 1
    staged = evidence_of(bench, bench.stores.rollouts.get(SCOPE, first))  # type: ignore[union-attr]
    assert [m.text for m in staged.messages] == ["I switched to coffee in March."]
    assert staged.final_answer == "Coffee it is.\n[tool calls: learn]"
    assert staged.run_id == run.run_id


@pytest.mark.parametrize("status", ["failed", "aborted", "parked"])
def test_a_run_that_did_not_complete_stages_nothing(tmp_path: Path, status: str) -> None:
    bench = Bench(tmp_path)
    run = _session(bench, []).start_run("hello")
    run.add_turn("USER", "I prefer tea.")

    assert run.complete(None, status=status) is None  # type: ignore[arg-type]
    assert bench.pending() == []


def test_a_child_run_stages_nothing(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    session = _session(bench, [])
    parent = session.start_run("plan the trip")
    child = session.start_run("look up trains", parent_run_id=parent.run_id)
    child.add_turn("USER", "I prefer night trains.")

    assert child.complete("Found three.") is None
    assert bench.pending() == []


def test_a_staging_failure_is_reported_and_never_reaches_the_answer(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    errors: list[ConsolidationFailure] = []

    def unavailable(payload: object) -> None:
        raise StoreUnavailableError("the store is busy; retry")

    run = _session(bench, errors, stage=unavailable).start_run("hello")
    run.add_turn("USER", "I prefer tea.")

    rollout_id = run.complete("Noted.")

    assert rollout_id is not None
    assert [(e.stage, e.error, e.retryable) for e in errors] == [
        ("stage", "StoreUnavailableError", True)
    ]
    assert errors[0].scope == SCOPE
    assert bench.pending() == []


def test_a_memoryless_session_stages_nothing(tmp_path: Path) -> None:
    run = MemorySession.memoryless().start_run("hello")
    run.add_turn("USER", "I prefer tea.")

    assert run.complete("Noted.") is None


def test_evidence_of_another_scope_than_the_session_cannot_be_staged_there(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    other = Scope(memory_id="default", actor_id="tg:8")
    rollout = bench.run("I prefer tea.", scope=other)

    assert bench.pending() == []
    assert bench.pending(other) == [rollout.rollout_id]


def test_a_converse_answer_stages_its_run_with_the_tools_it_called(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    model = ScriptedConverse(
        [use_tool("memory_recall", {"query": "breakfast"}), say("Tea with breakfast, then.")]
    )
    agent = ConverseAgent(
        converse=model,
        model_id="scripted",
        session=_session(bench, []),
        system_prompt="You are helpful.",
        gate=allow_all,
    )

    answered = agent.answer("I prefer tea with breakfast.")

    (rollout_id,) = bench.pending()
    assert answered.run.evidence_id == rollout_id
    staged = evidence_of(bench, bench.stores.rollouts.get(SCOPE, rollout_id))  # type: ignore[union-attr]
    assert [m.text for m in staged.messages] == ["I prefer tea with breakfast."]
    assert staged.final_answer == "Tea with breakfast, then.\n[tool calls: memory_recall]"


def test_the_extraction_consumer_leaves_evidence_pending_for_consolidation(
    tmp_path: Path,
) -> None:
    bench = Bench(tmp_path)
    rollout = bench.run("I prefer tea.")
    assert bench.stores.rollouts is not None
    consumer = Consumer(
        rollouts=bench.stores.rollouts,
        staging=bench.staging,
        memories=embedded_memory,
        extract=lambda payload, memory, erasures: pytest.fail("evidence must not be extracted"),
        clock=bench.clock,
    )
    notice = RolloutNotice(
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        rollout_id=rollout.rollout_id,
        staging_key=str(rollout.staging_key),
    )

    assert consume(notice, consumer).status == "skipped"
    assert bench.pending() == [rollout.rollout_id]
