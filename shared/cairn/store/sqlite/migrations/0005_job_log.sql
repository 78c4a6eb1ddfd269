-- cairn SQLite schema, version 5: background jobs' switches and run log (cairn.jobs). `data`
-- holds the pydantic JobSwitches or JobRun, which carry counts and reasons, never content.
CREATE TABLE job_switches (
    memory_id TEXT NOT NULL PRIMARY KEY,
    data      TEXT NOT NULL
);

-- Run ids begin with the start time, so (memory, job, run id) descending is newest first.
CREATE TABLE job_runs (
    memory_id TEXT NOT NULL,
    job       TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    data      TEXT NOT NULL,
    PRIMARY KEY (memory_id, job, run_id)
);
