"""A session shorter than the message trigger is filed when it closes, not by the idle sweep
later: the embedded default (real SQLite, the real ONNX embedder, the offline extractor)."""

from __future__ import annotations

from pathlib import Path

from cairn.local.memory import open_memory
from cairn.local.store import all_records
from cairn.models import Scope

SCOPE = Scope(memory_id="default", actor_id="tg:7")


def _short_session(memory_path: Path, *, close_session: bool) -> None:
    with open_memory(memory_path, actor="tg:7") as memory:
        session = memory.session("short-1")
        run = session.start_run("Hi")
        run.add_turn("USER", "I prefer green tea in the morning.")
        run.add_turn("ASSISTANT", "Noted: green tea.")
        run.complete("Noted: green tea.")
        if close_session:
            session.close()
            session.close()  # closing twice releases nothing more


def test_a_two_message_session_is_recalled_in_the_next_process(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _short_session(path, close_session=True)

    with open_memory(path, actor="tg:7") as memory:
        found = memory.recall("what does the user drink in the morning?")
        rollouts = memory.stores.rollouts
        assert rollouts is not None
        filed = [v for v in all_records(memory.stores, SCOPE) if "green tea" in v.content]
        from_rollouts = {s.rollout_id for v in filed for s in v.sources if s.rollout_id}
        triggers = {rollouts.get(SCOPE, rid).trigger for rid in from_rollouts}
        counters = rollouts.counters(SCOPE, "short-1")

    assert any("green tea" in e.version.content for e in found.entries)
    assert triggers == {"session_closed"}
    assert len(from_rollouts) == 1  # closing twice released one rollout
    assert counters is not None
    assert counters.pending == ()


def test_a_session_left_open_is_released_when_its_memory_closes(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _short_session(path, close_session=False)

    with open_memory(path, actor="tg:7") as memory:
        contents = [v.content for v in all_records(memory.stores, SCOPE)]

    assert any("green tea" in text for text in contents)
