"""What ``cairn doctor`` reads from an embedded store: its integrity and its unfinished work.

Read-only (the file is opened with ``mode=ro``), so it is safe beside running processes. It
reports ids, states, counts and ages -- never event or record content.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from cairn.rollout.index import REDELIVER_AFTER, STALL_AFTER, Rollout, RolloutState
from cairn.store.sqlite.index_health import IndexHealth, check_index


@dataclass(frozen=True)
class StoreHealth:
    """``integrity`` is ``"ok"`` or SQLite's first complaint; ``unfinished`` the rollouts not
    consumed yet; ``stuck`` those past the age at which the sweep should have moved them;
    ``sessions_pending`` the sessions holding counted messages not yet in a rollout;
    ``index`` whether the recall index derived from the records agrees with them."""

    integrity: str
    unfinished: tuple[Rollout, ...] = ()
    stuck: tuple[Rollout, ...] = field(default=())
    sessions_pending: int = 0
    index: IndexHealth = field(default_factory=IndexHealth)

    @property
    def failed(self) -> tuple[Rollout, ...]:
        return tuple(r for r in self.unfinished if r.state is RolloutState.FAILED)

    @property
    def healthy(self) -> bool:
        return self.integrity == "ok" and not self.stuck and not self.failed and self.index.current


def check_store(path: Path, now: datetime, embedder_key: str | None = None) -> StoreHealth:
    """The health of the SQLite store at ``path`` at ``now`` (see ``StoreHealth``); with
    ``embedder_key``, how many live heads lack that embedder's vector."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return StoreHealth(integrity=f"cannot open the file ({exc})")
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        integrity = "ok" if rows == [("ok",)] else str(rows[0][0])
        unfinished = tuple(
            Rollout.model_validate_json(data)
            for (data,) in conn.execute(
                "SELECT data FROM rollouts WHERE state <> 'consumed' ORDER BY rollout_id"
            )
        )
        (pending,) = conn.execute(
            "SELECT count(*) FROM session_counters WHERE json_array_length(data, '$.pending') > 0"
        ).fetchone()
        index = check_index(conn, embedder_key)
    except sqlite3.DatabaseError as exc:
        return StoreHealth(integrity=f"not a readable cairn store ({exc})")
    finally:
        conn.close()
    stuck = tuple(r for r in unfinished if _stuck(r, now))
    return StoreHealth(
        integrity=integrity,
        unfinished=unfinished,
        stuck=stuck,
        sessions_pending=int(pending),
        index=index,
    )


def _stuck(rollout: Rollout, now: datetime) -> bool:
    """Claimed or staged past ``STALL_AFTER``, announced past ``REDELIVER_AFTER`` (twice the
    sweep's own thresholds, so a rollout the sweep is about to move is not reported)."""
    if rollout.state in (RolloutState.CLAIMED, RolloutState.STAGED):
        return now - rollout.updated_at > 2 * STALL_AFTER
    if rollout.state is RolloutState.ANNOUNCED:
        return now - rollout.updated_at > 2 * REDELIVER_AFTER
    return False
