-- cairn SQLite schema, version 1.
--
-- Every row is keyed by its scope (memory_id, actor_id) first: an id from another scope is
-- simply not there. Timestamps are ISO-8601 UTC text of one fixed width
-- (YYYY-MM-DDTHH:MM:SS.ffffffZ), so comparing the text compares the instants.
-- `data` columns hold the full pydantic model as JSON; the other columns exist to be queried.

-- Every version of every record; erase rewrites a row in place into its tombstone.
CREATE TABLE record_versions (
    memory_id      TEXT    NOT NULL,
    actor_id       TEXT    NOT NULL,
    record_id      TEXT    NOT NULL,
    version        INTEGER NOT NULL CHECK (version >= 1),
    created_at     TEXT    NOT NULL,
    status         TEXT    NOT NULL
        CHECK (status IN ('active', 'superseded', 'retracted', 'erased')),
    namespace      TEXT    NOT NULL,
    content_digest TEXT    NOT NULL,
    embedder_key   TEXT,
    data           TEXT    NOT NULL,
    PRIMARY KEY (memory_id, actor_id, record_id, version)
);

-- As-of reads: the newest version of a record created at or before T (covering index).
CREATE INDEX record_versions_as_of
    ON record_versions (memory_id, actor_id, record_id, created_at, version);

-- The head of each record, so live listing never scans old versions.
CREATE TABLE record_heads (
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    record_id TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    status    TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    PRIMARY KEY (memory_id, actor_id, record_id),
    FOREIGN KEY (memory_id, actor_id, record_id, version)
        REFERENCES record_versions (memory_id, actor_id, record_id, version)
);

-- Live listing in record-id order, and namespace-prefix listing (a range on the anchored prefix).
CREATE INDEX record_heads_by_status ON record_heads (memory_id, actor_id, status, record_id);
CREATE INDEX record_heads_by_namespace ON record_heads (memory_id, actor_id, namespace);

-- Vectors are keyed by content digest, not version: versions that keep the words share one.
-- `vector` is float32 little-endian, `dims` values long.
CREATE TABLE vectors (
    memory_id      TEXT    NOT NULL,
    actor_id       TEXT    NOT NULL,
    record_id      TEXT    NOT NULL,
    content_digest TEXT    NOT NULL,
    embedder_key   TEXT    NOT NULL,
    dims           INTEGER NOT NULL CHECK (dims >= 1),
    vector         BLOB    NOT NULL CHECK (length(vector) = 4 * dims),
    PRIMARY KEY (memory_id, actor_id, record_id, content_digest, embedder_key)
);

-- Short-term memory: immutable events, ordered within a session by (event_timestamp, event_id).
CREATE TABLE events (
    memory_id       TEXT NOT NULL,
    actor_id        TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_timestamp TEXT NOT NULL,
    branch          TEXT,
    created_at      TEXT NOT NULL,
    data            TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, session_id, event_id)
);

CREATE INDEX events_in_order
    ON events (memory_id, actor_id, session_id, event_timestamp, event_id);

-- The recall journal: what each recall selected, exact versions and digests.
CREATE TABLE journal (
    memory_id  TEXT NOT NULL,
    actor_id   TEXT NOT NULL,
    journal_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, journal_id)
);
