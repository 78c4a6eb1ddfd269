-- cairn SQLite schema, version 6: a generation per scope, bumped by every committed record
-- write (apply, erase, erase_scope) in the same transaction, so a recall index in any process
-- can tell with one point read whether a scope changed since it was built.

CREATE TABLE record_generations (
    memory_id  TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    generation INTEGER NOT NULL CHECK (generation >= 1),
    PRIMARY KEY (memory_id, actor_id)
);
