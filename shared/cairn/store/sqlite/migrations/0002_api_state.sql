-- cairn SQLite schema, version 2: what the AgentCore-compatible API keeps beside records and
-- events. Times are the fixed-width UTC text of version 1; `data` holds the pydantic model.

-- Memory resources (configuration), one row per memory id; names are unique among them.
CREATE TABLE memories (
    memory_id TEXT    NOT NULL PRIMARY KEY,
    name      TEXT    NOT NULL UNIQUE,
    revision  INTEGER NOT NULL CHECK (revision >= 1),
    data      TEXT    NOT NULL
);

-- Client-token claims: digests only (key, fingerprint) and a content-free outcome.
CREATE TABLE idempotency_claims (
    key        TEXT NOT NULL PRIMARY KEY,
    expires_at TEXT NOT NULL,
    data       TEXT NOT NULL
);

CREATE INDEX idempotency_claims_by_expiry ON idempotency_claims (expires_at);

-- Which actor's scope holds each record of a memory (the record API names no actor).
CREATE TABLE record_placements (
    memory_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    actor_id  TEXT NOT NULL,
    namespace TEXT NOT NULL,
    PRIMARY KEY (memory_id, record_id)
);

-- Actors under a namespace prefix (a range on the anchored prefix), and erase by actor.
CREATE INDEX record_placements_by_namespace ON record_placements (memory_id, namespace, actor_id);
CREATE INDEX record_placements_by_actor ON record_placements (memory_id, actor_id);
