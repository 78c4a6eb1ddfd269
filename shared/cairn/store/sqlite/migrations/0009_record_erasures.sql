-- cairn SQLite schema, version 9: a count of committed erasures per scope (erase, erase_scope,
-- a retracting apply), bumped in the erasure's own transaction and compared by an apply that
-- was planned before it (cairn.erasure_fence). Never decreased, never deleted: an erased scope
-- keeps its count, so a plan read before the erase can never pass the check.

CREATE TABLE record_erasures (
    memory_id  TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    erasures   INTEGER NOT NULL CHECK (erasures >= 1),
    PRIMARY KEY (memory_id, actor_id)
);
