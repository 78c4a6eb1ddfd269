-- cairn SQLite schema, version 12: links between two records of one scope, kept beside the
-- records (cairn.links), and the access counts counted from the recall journal with the
-- journal sequence they were counted up to. `data` holds the pydantic Link (ids, kind,
-- sources, time; never content).
CREATE TABLE links (
    memory_id TEXT NOT NULL,
    actor_id  TEXT NOT NULL,
    from_id   TEXT NOT NULL,
    kind      TEXT NOT NULL,
    to_id     TEXT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (memory_id, actor_id, from_id, kind, to_id)
);

CREATE INDEX links_to ON links (memory_id, actor_id, to_id);

CREATE TABLE access_counts (
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    record_id TEXT    NOT NULL,
    count     INTEGER NOT NULL CHECK (count >= 1),
    PRIMARY KEY (memory_id, actor_id, record_id)
);

CREATE TABLE access_cursors (
    memory_id TEXT    NOT NULL,
    actor_id  TEXT    NOT NULL,
    sequence  INTEGER NOT NULL CHECK (sequence >= 1),
    PRIMARY KEY (memory_id, actor_id)
);
