-- cairn SQLite schema, version 4: the history pyramid (cairn.chunks). One row per chunk; `data`
-- holds the pydantic Chunk, summary included. Rows are deleted (secure_delete) on erase.
CREATE TABLE chunks (
    memory_id  TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    level      INTEGER NOT NULL CHECK (level >= 1),
    from_seq   INTEGER NOT NULL CHECK (from_seq >= 1),
    to_seq     INTEGER NOT NULL CHECK (to_seq >= from_seq),
    chunk_id   TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    PRIMARY KEY (memory_id, actor_id, session_id, chunk_id),
    -- Same-level chunks never start at the same turn; the store checks contiguity itself.
    UNIQUE (memory_id, actor_id, session_id, level, from_seq)
);
