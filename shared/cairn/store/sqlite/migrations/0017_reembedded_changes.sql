-- cairn SQLite schema, version 17: the record change feed takes a `re-embedded` change, one
-- per vector `cairn reindex` stores for a version (VectorWriter.add_vectors), in the same
-- transaction, so a follower of the feed re-reads that head. SQLite cannot alter a CHECK, so
-- the table is made again with every row and its sequence counter kept (sequences are never
-- reused: a reader's cursor stays valid across the migration). Rows still hold no content.

CREATE TABLE record_changes_next (
    sequence  INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    record_id TEXT    NOT NULL,
    version   INTEGER NOT NULL CHECK (version >= 1),
    kind      TEXT    NOT NULL
        CHECK (kind IN ('created', 'updated', 'deleted', 'erased', 're-embedded')),
    at        TEXT    NOT NULL
);

INSERT INTO record_changes_next (sequence, memory_id, actor_id, record_id, version, kind, at)
    SELECT sequence, memory_id, actor_id, record_id, version, kind, at FROM record_changes
    ORDER BY sequence;

DELETE FROM sqlite_sequence WHERE name = 'record_changes_next';

INSERT INTO sqlite_sequence (name, seq)
    SELECT 'record_changes_next', seq FROM sqlite_sequence WHERE name = 'record_changes';

DROP TABLE record_changes;

ALTER TABLE record_changes_next RENAME TO record_changes;

CREATE INDEX record_changes_by_memory ON record_changes (memory_id, sequence);
