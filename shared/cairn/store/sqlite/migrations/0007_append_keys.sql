-- cairn SQLite schema, version 7: the idempotency keys of appends (issue 14). A key names the
-- event its first append stored, so an append repeated under it returns that event instead of
-- storing a second one. Digests and ids only, never content; forgotten with the actor's events.

CREATE TABLE append_keys (
    memory_id  TEXT NOT NULL,
    actor_id   TEXT NOT NULL,
    append_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, append_key)
) WITHOUT ROWID;

CREATE INDEX append_keys_by_expiry ON append_keys (expires_at);
