-- cairn SQLite schema, version 16: what a background job last noted per scope (cairn.jobs):
-- the rollup's history generation, the link job's change cursor, evolution's digest of each
-- record's neighbourhood. `value` is a cursor, a generation or a digest; never content.
CREATE TABLE job_markers (
    memory_id TEXT NOT NULL,
    actor_id  TEXT NOT NULL,
    job       TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, job, key)
);
