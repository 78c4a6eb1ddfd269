-- cairn SQLite schema, version 10: the recall journal's hash chain per scope
-- (cairn.journal_chain). Each entry's place in its scope's chain, and the scope's head (last
-- sequence and its chain digest), written in the entry's own transaction. Entries filed before
-- this migration keep sequence 0: they are not in any chain.

ALTER TABLE journal ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0;

CREATE INDEX journal_chain ON journal (memory_id, actor_id, sequence);

CREATE TABLE journal_heads (
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    sequence  INTEGER NOT NULL CHECK (sequence >= 1),
    digest    TEXT    NOT NULL,
    PRIMARY KEY (memory_id, actor_id)
);
