-- +goose Up
-- Sub-runs (issue 10): one agent delegating work to another, as ai-leash
-- records the agents it spawns. A sub-run is a conversation of its own: an
-- exchange of scope 'subrun' whose parent_id / parent_seq point at the
-- exchange and the entry of its log that spawned it, with a sub_runs row
-- saying which agent ran, when it started and finished, and how it ended.
-- Deleting the parent deletes its sub-runs (and theirs) by cascade.
ALTER TABLE exchanges
    ADD COLUMN parent_id BIGINT REFERENCES exchanges (id) ON DELETE CASCADE,
    ADD COLUMN parent_seq BIGINT,
    DROP CONSTRAINT exchanges_scope_check,
    DROP CONSTRAINT exchanges_check,
    ADD CONSTRAINT exchanges_scope_check CHECK (scope IN ('general', 'page', 'job', 'subrun')),
    ADD CONSTRAINT exchanges_check CHECK (
        (scope = 'general' AND page_id IS NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL AND parent_id IS NULL)
        OR (scope = 'subrun' AND parent_id IS NOT NULL AND parent_seq IS NOT NULL AND page_id IS NULL AND job_id IS NULL));
-- A parent's sub-runs, in the order they were spawned; also what the
-- cascade reads when a parent is deleted.
CREATE INDEX exchanges_parent ON exchanges (parent_id, parent_seq) WHERE parent_id IS NOT NULL;

-- One row per sub-run: the agent that ran, what it was asked (task), and
-- how it ended: running, then ok or failed with a short result.
CREATE TABLE sub_runs (
    exchange_id BIGINT PRIMARY KEY REFERENCES exchanges (id) ON DELETE CASCADE,
    agent       TEXT        NOT NULL,
    task        TEXT        NOT NULL DEFAULT '',
    status      TEXT        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
    result      TEXT        NOT NULL DEFAULT '',
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);

-- +goose Down
DROP TABLE sub_runs;
DELETE FROM exchanges WHERE scope = 'subrun';
DROP INDEX exchanges_parent;
ALTER TABLE exchanges
    DROP CONSTRAINT exchanges_check,
    DROP CONSTRAINT exchanges_scope_check,
    DROP COLUMN parent_seq,
    DROP COLUMN parent_id,
    ADD CONSTRAINT exchanges_scope_check CHECK (scope IN ('general', 'page', 'job')),
    ADD CONSTRAINT exchanges_check CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL));
