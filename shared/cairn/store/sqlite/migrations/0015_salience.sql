-- cairn SQLite schema, version 15: each record's salience (cairn.history.decay), kept beside
-- the record like its access count, never as a version. `data` holds the pydantic Salience
-- (record id, access count when measured, times and value; never content).
CREATE TABLE salience (
    memory_id TEXT NOT NULL,
    actor_id  TEXT NOT NULL,
    record_id TEXT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, record_id)
);
