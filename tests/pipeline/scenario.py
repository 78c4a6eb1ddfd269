"""The conversation every pipeline test holds, and what a user must then find in memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from cairn.clock import FixedClock
from cairn.model_request import ModelRequest, ModelResponse
from cairn.models import Conversational, EventInput, RecordVersion, Role, Scope, Status
from cairn.ports import ModelProvider, Stores

SCOPE = Scope(memory_id="support-AbCdEf1234", actor_id="tg:12345")
SESSION = "chat-1"

# Six turns: exactly the built-in message trigger (cairn.extract.triggers.BUILT_IN_TRIGGERS).
TURNS: tuple[tuple[Role, str], ...] = (
    (Role.USER, "Hi! My name is Ada Okafor."),
    (Role.ASSISTANT, "Nice to meet you, Ada. How can I help?"),
    (Role.USER, "I prefer oat milk flat whites in the morning."),
    (Role.ASSISTANT, "Noted: oat milk."),
    (Role.USER, "My office is in Lisbon."),
    (Role.ASSISTANT, "Lisbon, got it."),
)
# What the offline extractor files from those turns, in words a user would search for.
EXPECTED_WORDS = ("oat milk", "Lisbon", "Ada Okafor")


def turn(role: Role, text: str, clock: FixedClock, *, session_id: str = SESSION) -> EventInput:
    event = EventInput(
        session_id=session_id,
        event_timestamp=clock.now(),
        payload=(Conversational(role=role, text=text),),
    )
    clock.advance(timedelta(seconds=1))
    return event


def live_records(stores: Stores, scope: Scope = SCOPE) -> list[RecordVersion]:
    return [
        v
        for v in stores.records.list_records(scope, include_inactive=True, limit=1000).items
        if v.status is Status.ACTIVE
    ]


def assert_remembered(records: Sequence[RecordVersion], rollout_id: str) -> None:
    """Every expected fact is filed once (besides the session's one summary), citing the
    rollout it was extracted from."""
    summaries = [r for r in records if r.category == "summary"]
    assert len(summaries) == 1, [r.content for r in summaries]
    for words in EXPECTED_WORDS:
        holding = [r for r in records if words in r.content and r.category != "summary"]
        assert len(holding) == 1, (words, [r.content for r in records])
    for record in records:
        assert any(source.rollout_id == rollout_id for source in record.sources)
    contents = [r.content_digest for r in records]
    assert len(contents) == len(set(contents)), "a fact was filed twice"


class TimedModel:
    """Wraps a provider and keeps the wall time spent inside it (to exclude model time)."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        import time

        started = time.perf_counter()
        try:
            return self.inner.complete(request)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1
