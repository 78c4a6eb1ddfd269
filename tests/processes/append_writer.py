"""One writer process: appends counted events to a shared SQLite file, acknowledging each.

    python -m tests.processes.append_writer <store> <writer> <first> <count>

Event ``<writer>-<i>`` for i in [first, count) is appended through ``append_counted`` (the
path every embedded append takes) into one shared session; the line ``<writer>-<i>`` is printed
and flushed only after the append returned, so a printed line is an acknowledged event.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.clock import SystemClock
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.rollout.index import TriggerPolicy
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
SESSION = "shared"
POLICY = TriggerPolicy(strategy_ids=("facts",), message_count=5)
T0 = datetime(2026, 1, 1, 9, tzinfo=UTC)


def main(store: str, writer: str, first: int, count: int) -> None:
    stores = SQLiteBackend(Path(store), SystemClock()).stores()
    rollouts = stores.rollouts
    assert rollouts is not None
    for index in range(first, count):
        name = f"{writer}-{index}"
        event = EventInput(
            session_id=SESSION,
            event_timestamp=T0 + timedelta(seconds=index),
            payload=(Conversational(role=Role.USER, text=f"turn {name}"),),
            metadata={"n": name},
        )
        rollouts.append_counted(SCOPE, event, policy=POLICY)
        print(name, flush=True)
    stores.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
