-- cairn SQLite schema, version 8: the record change feed. Every committed record write adds
-- one row per version it wrote (erasure: one row per record), in the write's own transaction,
-- so a reader following the feed sees a change if and only if its write committed. Rows hold
-- no content: which version of which record changed, and how.

CREATE TABLE record_changes (
    sequence  INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    record_id TEXT    NOT NULL,
    version   INTEGER NOT NULL CHECK (version >= 1),
    kind      TEXT    NOT NULL CHECK (kind IN ('created', 'updated', 'deleted', 'erased')),
    at        TEXT    NOT NULL
);

CREATE INDEX record_changes_by_memory ON record_changes (memory_id, sequence);
