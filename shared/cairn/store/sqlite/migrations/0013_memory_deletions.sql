-- cairn SQLite schema, version 13: deletion marks (MemoryConfigStore.mark_deleting). A row
-- says DeleteMemory began on the memory; the API's fenced writes check it in their own
-- transaction and write nothing in a marked memory. Rows are never removed (ids are unique).
CREATE TABLE memory_deletions (
    memory_id TEXT PRIMARY KEY
);
