-- +goose NO TRANSACTION
-- +goose Up
-- Sub-runs (issue 10): one agent delegating work to another, as ai-leash
-- records the agents it spawns. A sub-run is a conversation of its own: an
-- exchange of scope 'subrun' whose parent_id / parent_seq point at the
-- exchange and the entry of its log that spawned it, with a sub_runs row
-- saying which agent ran, when it started and finished, and how it ended.
-- Deleting the parent deletes its sub-runs (and theirs) by cascade.
--
-- The new scope needs the scope checks rewritten, which SQLite can only do
-- by rebuilding the table, as 00006 did: foreign keys off (hence NO
-- TRANSACTION and the explicit BEGIN / COMMIT), every row copied with its
-- id. Unlike 00006, the triggers on messages that write to exchanges (their
-- latest versions are 00003's and 00008's) stay as they are:
-- legacy_alter_table lets the rename through without checking them against
-- the table that is briefly gone, and they name exchanges, which is the
-- rebuilt table's name again when the rename is done. The triggers that
-- keep exchanges_fts (00007) are on exchanges itself and go with the old
-- table: they are made again below; the index keeps its entries, since the
-- titles and ids are the same.
PRAGMA foreign_keys = OFF;
PRAGMA legacy_alter_table = ON;
BEGIN IMMEDIATE;

CREATE TABLE exchanges_new (
    id                INTEGER PRIMARY KEY,
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope             TEXT    NOT NULL DEFAULT 'general' CHECK (scope IN ('general', 'page', 'job', 'subrun')),
    page_id           INTEGER REFERENCES pages (id) ON DELETE CASCADE,
    job_id            TEXT,
    title             TEXT    NOT NULL DEFAULT '',
    agent_type        TEXT    NOT NULL DEFAULT '',
    forked_from_id    INTEGER REFERENCES exchanges (id) ON DELETE SET NULL,
    forked_at_seq     INTEGER,
    pinned            BOOLEAN NOT NULL DEFAULT 0,
    archived          BOOLEAN NOT NULL DEFAULT 0,
    turn_count        INTEGER NOT NULL DEFAULT 0,
    created_at        DATETIME NOT NULL,
    updated_at        DATETIME NOT NULL,
    turn_status       TEXT    NOT NULL DEFAULT 'idle' CHECK (turn_status IN ('idle', 'running', 'failed')),
    turn_owner        TEXT,
    turn_heartbeat_at DATETIME,
    turn_attempts     INTEGER NOT NULL DEFAULT 0,
    stored_bytes      INTEGER NOT NULL DEFAULT 0,
    parent_id         INTEGER REFERENCES exchanges (id) ON DELETE CASCADE,
    parent_seq        INTEGER,
    CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL AND parent_id IS NULL)
        OR (scope = 'subrun' AND parent_id IS NOT NULL AND parent_seq IS NOT NULL AND page_id IS NULL AND job_id IS NULL))
);
INSERT INTO exchanges_new (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes)
SELECT id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes
FROM exchanges;
DROP TABLE exchanges;
ALTER TABLE exchanges_new RENAME TO exchanges;

CREATE INDEX exchanges_user_scope_activity ON exchanges (user_id, scope, updated_at DESC, id DESC);
CREATE INDEX exchanges_page_activity ON exchanges (page_id, updated_at DESC, id DESC) WHERE page_id IS NOT NULL;
CREATE UNIQUE INDEX exchanges_user_job ON exchanges (user_id, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX exchanges_running ON exchanges (turn_status) WHERE turn_status = 'running';
CREATE INDEX exchanges_forked_from ON exchanges (forked_from_id) WHERE forked_from_id IS NOT NULL;
CREATE INDEX exchanges_activity ON exchanges (updated_at DESC, id DESC);
CREATE INDEX exchanges_size ON exchanges (stored_bytes DESC, id DESC);
CREATE INDEX exchanges_turns ON exchanges (turn_count DESC, id DESC);
CREATE INDEX exchanges_created ON exchanges (created_at);
-- A parent's sub-runs, in the order they were spawned; also what the
-- cascade reads when a parent is deleted.
CREATE INDEX exchanges_parent ON exchanges (parent_id, parent_seq) WHERE parent_id IS NOT NULL;

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title) VALUES (new.id, new.title);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title) VALUES ('delete', old.id, old.title);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title ON exchanges
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title) VALUES ('delete', old.id, old.title);
    INSERT INTO exchanges_fts (rowid, title) VALUES (new.id, new.title);
END;
-- +goose StatementEnd

-- One row per sub-run: the agent that ran, what it was asked (task), and
-- how it ended: running, then ok or failed with a short result.
CREATE TABLE sub_runs (
    exchange_id INTEGER PRIMARY KEY REFERENCES exchanges (id) ON DELETE CASCADE,
    agent       TEXT     NOT NULL,
    task        TEXT     NOT NULL DEFAULT '',
    status      TEXT     NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
    result      TEXT     NOT NULL DEFAULT '',
    started_at  DATETIME NOT NULL,
    finished_at DATETIME
);

COMMIT;
PRAGMA legacy_alter_table = OFF;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Sub-runs go (their exchanges and logs with them), then the table is
-- rebuilt without the parent columns, the same way.
PRAGMA foreign_keys = OFF;
PRAGMA legacy_alter_table = ON;
BEGIN IMMEDIATE;

DROP TABLE sub_runs;
DELETE FROM messages WHERE exchange_id IN (SELECT id FROM exchanges WHERE scope = 'subrun');
DELETE FROM exchanges WHERE scope = 'subrun';

CREATE TABLE exchanges_old (
    id                INTEGER PRIMARY KEY,
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope             TEXT    NOT NULL DEFAULT 'general' CHECK (scope IN ('general', 'page', 'job')),
    page_id           INTEGER REFERENCES pages (id) ON DELETE CASCADE,
    job_id            TEXT,
    title             TEXT    NOT NULL DEFAULT '',
    agent_type        TEXT    NOT NULL DEFAULT '',
    forked_from_id    INTEGER REFERENCES exchanges (id) ON DELETE SET NULL,
    forked_at_seq     INTEGER,
    pinned            BOOLEAN NOT NULL DEFAULT 0,
    archived          BOOLEAN NOT NULL DEFAULT 0,
    turn_count        INTEGER NOT NULL DEFAULT 0,
    created_at        DATETIME NOT NULL,
    updated_at        DATETIME NOT NULL,
    turn_status       TEXT    NOT NULL DEFAULT 'idle' CHECK (turn_status IN ('idle', 'running', 'failed')),
    turn_owner        TEXT,
    turn_heartbeat_at DATETIME,
    turn_attempts     INTEGER NOT NULL DEFAULT 0,
    stored_bytes      INTEGER NOT NULL DEFAULT 0,
    CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL))
);
INSERT INTO exchanges_old (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes)
SELECT id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes
FROM exchanges;
DROP TABLE exchanges;
ALTER TABLE exchanges_old RENAME TO exchanges;

CREATE INDEX exchanges_user_scope_activity ON exchanges (user_id, scope, updated_at DESC, id DESC);
CREATE INDEX exchanges_page_activity ON exchanges (page_id, updated_at DESC, id DESC) WHERE page_id IS NOT NULL;
CREATE UNIQUE INDEX exchanges_user_job ON exchanges (user_id, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX exchanges_running ON exchanges (turn_status) WHERE turn_status = 'running';
CREATE INDEX exchanges_forked_from ON exchanges (forked_from_id) WHERE forked_from_id IS NOT NULL;
CREATE INDEX exchanges_activity ON exchanges (updated_at DESC, id DESC);
CREATE INDEX exchanges_size ON exchanges (stored_bytes DESC, id DESC);
CREATE INDEX exchanges_turns ON exchanges (turn_count DESC, id DESC);
CREATE INDEX exchanges_created ON exchanges (created_at);

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title) VALUES (new.id, new.title);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title) VALUES ('delete', old.id, old.title);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title ON exchanges
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title) VALUES ('delete', old.id, old.title);
    INSERT INTO exchanges_fts (rowid, title) VALUES (new.id, new.title);
END;
-- +goose StatementEnd

COMMIT;
PRAGMA legacy_alter_table = OFF;
PRAGMA foreign_keys = ON;
