-- cairn SQLite schema, version 13: a generation per scope for its turns and chunks, moved by
-- triggers inside the very statement that writes an event or a chunk, so every path (append,
-- counted append, delete, a turn's summaries forgotten, erasures) moves it in its own
-- transaction, and recall over history in any process can tell with one point read whether a
-- scope's turns and chunks changed since it listed them.

CREATE TABLE history_generations (
    memory_id  TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    generation INTEGER NOT NULL CHECK (generation >= 1),
    PRIMARY KEY (memory_id, actor_id)
);

CREATE TRIGGER events_written AFTER INSERT ON events BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (NEW.memory_id, NEW.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER events_deleted AFTER DELETE ON events BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (OLD.memory_id, OLD.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER events_changed AFTER UPDATE ON events BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (NEW.memory_id, NEW.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER chunks_written AFTER INSERT ON chunks BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (NEW.memory_id, NEW.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (OLD.memory_id, OLD.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER chunks_changed AFTER UPDATE ON chunks BEGIN
    INSERT INTO history_generations (memory_id, actor_id, generation)
    VALUES (NEW.memory_id, NEW.actor_id, 1)
    ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1;
END;
