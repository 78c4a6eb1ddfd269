-- cairn SQLite schema, version 11: the operator's quarantine list (cairn.quarantine). `data`
-- holds the pydantic QuarantineEntry: a selector, an operator's reason and a time, no content.
CREATE TABLE quarantine (
    memory_id TEXT NOT NULL,
    selector  TEXT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (memory_id, selector)
);
