"""``cairn doctor`` on real SQLite files: healthy, stuck work, a file that is not a store."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cairn.cli.main import main
from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import RolloutState, TriggerPolicy
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="tg:1")
POLICY = TriggerPolicy(strategy_ids=("facts",), message_count=2)


def talk(path: Path, clock: FixedClock, session: str, turns: int) -> list[str]:
    """Append ``turns`` counted turns; the ids of the rollouts the triggers claimed."""
    stores = SQLiteBackend(path, clock).stores()
    rollouts = stores.rollouts
    assert rollouts is not None
    claimed = []
    try:
        for n in range(turns):
            event = EventInput(
                session_id=session,
                event_timestamp=clock.now(),
                payload=(Conversational(role=Role.USER, text=f"private turn {n}"),),
            )
            appended = rollouts.append_counted(SCOPE, event, policy=POLICY)
            if appended.claim is not None:
                claimed.append(appended.claim.rollout_id)
            clock.advance(timedelta(seconds=1))
    finally:
        stores.close()
    return claimed


def test_a_healthy_store_is_reported_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    talk(path, FixedClock(), "s1", 1)  # one message waiting for its trigger

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 0
    assert "integrity ok" in out
    assert "1 with messages waiting" in out
    assert out.rstrip().endswith("healthy")
    assert "private turn" not in out


def test_stuck_and_failed_rollouts_need_an_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    clock = FixedClock()  # long ago: whatever it left unfinished is stuck by now
    stuck, failed = talk(path, clock, "s1", 4)
    stores = SQLiteBackend(path, clock).stores()
    assert stores.rollouts is not None
    reason = "InvalidModelOutputError: the model's answer was not JSON"
    stores.rollouts.mark(SCOPE, failed, RolloutState.FAILED, now=clock.now(), reason=reason)
    stores.close()

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "not consumed yet: 1 claimed, 1 failed" in out
    assert f"stuck      {stuck} claimed" in out
    assert f"failed     {failed}: {reason}" in out
    assert "needs an operator" in out
    assert "private turn" not in out


def test_a_file_that_is_not_a_store_fails_its_integrity_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    path.write_bytes(b"this is not a SQLite database, just some bytes" * 100)

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "integrity not a readable cairn store" in out
