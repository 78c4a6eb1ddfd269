-- cairn SQLite schema, version 3: the rollout index of the extraction pipeline
-- (cairn.rollout.index). Times are the fixed-width UTC text of version 1; `data` holds the pydantic
-- model (SessionCounters or Rollout), which never carries message content.

-- One row per session that has counted a message: its counters toward the next rollout.
-- `idle_due_at` is set only while messages are pending under an idle timeout.
CREATE TABLE session_counters (
    memory_id   TEXT    NOT NULL,
    actor_id    TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 0),
    idle_due_at TEXT,
    data        TEXT    NOT NULL,
    PRIMARY KEY (memory_id, actor_id, session_id)
);

-- The idle sweep: sessions whose timeout has passed, across every scope.
CREATE INDEX session_counters_idle ON session_counters (idle_due_at)
    WHERE idle_due_at IS NOT NULL;

-- One row per rollout. Rollout ids begin with their claim time, so id order is claim order.
-- `due_at` (cairn.rollout.index.due_at) is when the sweep should next look at it; NULL once it
-- needs nothing more (consumed, failed).
CREATE TABLE rollouts (
    memory_id  TEXT NOT NULL,
    actor_id   TEXT NOT NULL,
    rollout_id TEXT NOT NULL,
    state      TEXT NOT NULL
        CHECK (state IN ('claimed', 'staged', 'announced', 'consumed', 'failed')),
    due_at     TEXT,
    data       TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, rollout_id)
);

CREATE INDEX rollouts_pending ON rollouts (memory_id, actor_id, rollout_id)
    WHERE state <> 'consumed';
CREATE INDEX rollouts_due ON rollouts (due_at, rollout_id) WHERE due_at IS NOT NULL;
