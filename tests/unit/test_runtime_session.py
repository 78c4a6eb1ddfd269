"""MemorySession: turns are batched, flushed on the batch, the byte bound, close and exit, and
nothing a session accepted is lost or written twice; a memoryless session has the same API."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.changes import NewRecord
from cairn.clock import FixedClock
from cairn.errors import InvalidInputError, StoreUnavailableError
from cairn.models import Conversational, Event, EventInput, Role, Scope, Source
from cairn.ports import Stores
from cairn.recall import RecallPolicy, RecallQuery
from cairn.runtime import MemorySession, RecalledItem, SessionOptions
from cairn.runtime.in_process import InProcessSessionStore
from cairn.runtime.session_store import Recalled, Written
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-1", actor_id="tg:42")


def _events(stores: Stores, session_id: str = "s1") -> list[Event]:
    return list(stores.events.list_events(SCOPE, session_id).items)


def _texts(events: Sequence[Event]) -> list[str]:
    return [p.text for e in events for p in e.payload if isinstance(p, Conversational)]


def _session(stores: Stores, clock: FixedClock, **options: object) -> MemorySession:
    return MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=HashingEmbedder(),
        clock=clock,
        options=SessionOptions.model_validate(options),
    )


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def stores(clock: FixedClock) -> Stores:
    return InMemoryBackend(clock).stores()


def test_turns_wait_for_a_full_batch_then_are_written_together_in_order(
    stores: Stores, clock: FixedClock
) -> None:
    session = _session(stores, clock, batch_size=3)
    session.add_turn(Role.USER, "first")
    session.add_turn(Role.ASSISTANT, "second")
    assert _events(stores) == []
    assert session.pending_turns == 2

    session.add_turn("user", "third")
    assert _texts(_events(stores)) == ["first", "second", "third"]
    assert session.pending_turns == 0


def test_a_turn_past_the_byte_bound_is_written_at_once(stores: Stores, clock: FixedClock) -> None:
    session = _session(stores, clock, batch_size=50, max_buffer_bytes=100)
    session.add_turn(Role.USER, "short")
    assert _events(stores) == []
    session.add_turn(Role.USER, "é" * 60)  # 120 bytes of UTF-8, though only 60 characters
    assert _texts(_events(stores)) == ["short", "é" * 60]


def test_close_writes_a_partial_batch_and_refuses_further_turns(
    stores: Stores, clock: FixedClock
) -> None:
    with _session(stores, clock, batch_size=10) as session:
        session.add_turn(Role.USER, "hello")
        session.add_turn(Role.ASSISTANT, "hi")
    assert _texts(_events(stores)) == ["hello", "hi"]
    with pytest.raises(InvalidInputError, match="closed"):
        session.add_turn(Role.USER, "too late")
    session.close()  # closing twice is harmless
    assert len(_events(stores)) == 2


def test_turns_accepted_in_the_same_instant_keep_their_order(
    stores: Stores, clock: FixedClock
) -> None:
    session = _session(stores, clock, batch_size=100)
    said = [f"turn {n}" for n in range(12)]
    for text in said:
        session.add_turn(Role.USER, text)  # the clock never moves
    session.close()
    events = _events(stores)
    assert _texts(events) == said
    stamps = [e.event_timestamp for e in events]
    assert stamps == sorted(set(stamps))


def test_turns_less_than_a_millisecond_apart_keep_their_order_at_the_wire_s_resolution(
    stores: Stores, clock: FixedClock
) -> None:
    # The AgentCore wire keeps event times to the millisecond: turns told 0.4 ms apart must
    # still be a millisecond apart, or two of them share a time there and lose their order.
    session = _session(stores, clock, batch_size=100)
    for n in range(6):
        session.add_turn(Role.USER, f"turn {n}")
        clock.advance(timedelta(microseconds=400))
    session.close()
    stamps = [e.event_timestamp for e in _events(stores)]
    millis = [s.replace(microsecond=s.microsecond // 1000 * 1000) for s in stamps]
    assert millis == sorted(set(millis))


class _FlakyStore(InProcessSessionStore):
    """Refuses the batch write numbered ``fail_on`` once, as a throttled store would; with
    ``landed``, that many of its turns are stored before the refusal (an answer lost midway)."""

    def __init__(self, stores: Stores, clock: FixedClock, fail_on: int, landed: int = 0) -> None:
        super().__init__(stores, embedder=None, clock=clock)
        self.calls: list[int] = []
        self._fail_on = fail_on
        self._landed = landed

    def append_batch(self, scope: Scope, turns: Sequence[tuple[EventInput, str]]) -> None:
        self.calls.append(len(turns))
        if len(self.calls) == self._fail_on:
            if self._landed:
                super().append_batch(scope, turns[: self._landed])
            raise StoreUnavailableError("throttled")
        super().append_batch(scope, turns)


def test_a_failed_write_keeps_its_batch_buffered_and_nothing_is_written_twice(
    stores: Stores, clock: FixedClock
) -> None:
    store = _FlakyStore(stores, clock, fail_on=2)
    session = MemorySession(
        store, scope=SCOPE, session_id="s1", clock=clock, options=SessionOptions(batch_size=2)
    )
    session.add_turn(Role.USER, "one")
    session.add_turn(Role.USER, "two")
    session.add_turn(Role.USER, "three")
    with pytest.raises(StoreUnavailableError):
        session.add_turn(Role.USER, "four")
    assert _texts(_events(stores)) == ["one", "two"]
    assert session.pending_turns == 2  # "three" and "four": accepted, still held

    assert session.flush() == 2
    assert _texts(_events(stores)) == ["one", "two", "three", "four"]
    assert store.calls == [2, 2, 2]  # one write per batch, the failed one once more


def test_a_batch_that_half_landed_is_written_again_without_doubling_a_turn(
    stores: Stores, clock: FixedClock
) -> None:
    store = _FlakyStore(stores, clock, fail_on=1, landed=2)
    session = MemorySession(
        store, scope=SCOPE, session_id="s1", clock=clock, options=SessionOptions(batch_size=3)
    )
    session.add_turn(Role.USER, "one")
    session.add_turn(Role.USER, "two")
    with pytest.raises(StoreUnavailableError):
        session.add_turn(Role.USER, "three")
    assert _texts(_events(stores)) == ["one", "two"]
    assert session.pending_turns == 3

    assert session.flush() == 3
    assert _texts(_events(stores)) == ["one", "two", "three"]


def test_a_local_session_writes_each_batch_in_one_transaction(tmp_path: Path) -> None:
    clock = FixedClock()
    backend = SQLiteBackend(tmp_path / "cairn.db", clock)
    stores = backend.stores()
    begun: list[bool] = []
    transaction = backend._db.transaction

    def counted(*, write: bool, fsync: bool = True):  # type: ignore[no-untyped-def]
        begun.append(write)
        return transaction(write=write, fsync=fsync)

    try:
        session = MemorySession.local(
            stores,
            memory_id="mem-1",
            actor_id="u1",
            session_id="s1",
            clock=clock,
            options=SessionOptions(batch_size=8),
        )
        for i in range(7):
            session.add_turn(Role.USER, f"turn {i}")
        backend._db.transaction = counted  # type: ignore[method-assign]
        session.add_turn(Role.USER, "turn 7")
        writes = begun.count(True)
        backend._db.transaction = transaction  # type: ignore[method-assign]
        assert writes == 1
        assert (
            len(stores.events.list_events(Scope(memory_id="mem-1", actor_id="u1"), "s1").items) == 8
        )
    finally:
        stores.close()


def test_turns_still_buffered_at_a_normal_exit_are_written(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    script = textwrap.dedent(
        f"""
        from cairn.runtime import MemorySession, SessionOptions
        from cairn.store.sqlite import SQLiteBackend
        stores = SQLiteBackend({str(path)!r}).stores()
        session = MemorySession.local(
            stores, memory_id="mem-1", actor_id="tg:42", session_id="s1",
            options=SessionOptions(batch_size=50),
        )
        session.add_turn("USER", "remember me")
        session.add_turn("ASSISTANT", "I will")
        assert session.pending_turns == 2
        # no close(), no flush(): the interpreter simply exits
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)  # noqa: S603 - our interpreter, our script

    reopened = SQLiteBackend(path).stores()
    try:
        assert _texts(_events(reopened)) == ["remember me", "I will"]
    finally:
        reopened.close()


def test_blank_turns_are_skipped_and_bad_turns_refused_before_anything_is_kept(
    stores: Stores, clock: FixedClock
) -> None:
    session = _session(stores, clock, batch_size=1)
    session.add_turn(Role.ASSISTANT, "   ")
    with pytest.raises(InvalidInputError, match="100000 characters"):
        session.add_turn(Role.USER, "x" * 100_001)
    with pytest.raises(InvalidInputError, match="role must be one of"):
        session.add_turn("narrator", "once upon a time")
    assert session.pending_turns == 0
    assert _events(stores) == []


def test_a_malformed_session_id_is_refused_with_what_to_do(stores: Stores) -> None:
    with pytest.raises(InvalidInputError, match="session id"):
        MemorySession.local(stores, memory_id="m", actor_id="a", session_id="no spaces please")


def test_a_memoryless_session_has_the_same_api_and_keeps_nothing() -> None:
    with MemorySession.memoryless() as session:
        run = session.start_run("what do you know about me?")
        assert not session.has_memory
        assert run.block == ""
        assert run.system_prompt("You are helpful.") == "You are helpful."
        assert run.tools.definitions == ()
        assert run.tools.converse_tool_config() is None
        assert run.tools.openai_tools() == []
        assert run.turn_context("anything") is None
        assert not run.tools.call("learn", {"lesson": "x"}).ok
        run.add_turn(Role.USER, "hello")
        assert session.pending_turns == 0


class _DownStore(InProcessSessionStore):
    """A store whose recall is unavailable (appends still work)."""

    def recall(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, *, journal: bool
    ) -> Recalled:
        raise StoreUnavailableError("unreachable")

    def journal_injection(
        self, scope: Scope, query: RecallQuery, shown: Sequence[RecalledItem], policy: RecallPolicy
    ) -> str | None:
        raise AssertionError("nothing is injected when recall fails")

    def learn(self, scope: Scope, record: NewRecord) -> Written:
        raise StoreUnavailableError("unreachable")

    def revise(self, scope: Scope, record_id: str, content: str, source: Source) -> Written:
        raise StoreUnavailableError("unreachable")


def test_a_run_goes_on_without_recall_when_the_store_is_down(
    stores: Stores, clock: FixedClock
) -> None:
    session = MemorySession(
        _DownStore(stores, embedder=None, clock=clock),
        scope=SCOPE,
        session_id="s1",
        clock=clock,
        options=SessionOptions(per_turn_recall=True),
    )
    run = session.start_run("deploying to staging")
    assert run.block.startswith("## Recalled memories")
    assert run.journal_id is None
    assert run.turn_context("deploying to staging") is None
    outcome = run.tools.call("learn", {"lesson": "Always run the migrations first."})
    assert not outcome.ok
    assert "unavailable" in outcome.content["error"]
