-- +goose NO TRANSACTION
-- +goose Up
-- A job id is an opaque string (Galaxy sends encoded ids such as
-- "f2db41e1fa331b3e"), so exchanges.job_id becomes TEXT; existing ids keep
-- their value as decimal text.
--
-- SQLite cannot change a column's type in place: the table is rebuilt as
-- https://www.sqlite.org/lang_altertable.html ("Making Other Kinds Of Table
-- Schema Changes") describes. messages and admin_audit reference exchanges
-- with ON DELETE actions, so dropping the old table while foreign keys are
-- enforced would delete every message: they are off during the rebuild. That
-- pragma does nothing inside a transaction, hence NO TRANSACTION and the
-- explicit BEGIN / COMMIT below; goose runs the statements of a file that
-- opts out of its transaction one after another on a single connection, so
-- the pragma and the transaction hold for all of them. Every row is copied
-- with its id, so no reference can dangle (the migration test runs
-- foreign_key_check).
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

-- The triggers that keep stored_bytes (00003) are on messages but write to
-- exchanges: while the old table is gone they would name a missing table,
-- which the rename refuses, so they are dropped here and made again below.
DROP TRIGGER messages_bytes_insert;
DROP TRIGGER messages_bytes_delete;
DROP TRIGGER messages_bytes_update;

CREATE TABLE exchanges_new (
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
INSERT INTO exchanges_new (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes)
SELECT id, user_id, scope, page_id, CAST(job_id AS TEXT), title, agent_type, forked_from_id, forked_at_seq,
    pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts,
    stored_bytes
FROM exchanges;
DROP TABLE exchanges;
ALTER TABLE exchanges_new RENAME TO exchanges;

-- The indexes of 00001 and 00003 went with the old table, and the triggers
-- dropped above come back as 00003 made them. (No trigger is on exchanges
-- itself.)
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
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_bytes_delete AFTER DELETE ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes - length(CAST(old.content AS BLOB))
        - COALESCE(length(CAST(old.agent_response AS BLOB)), 0) - COALESCE(length(CAST(old.tool AS BLOB)), 0)
    WHERE id = old.exchange_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_bytes_update AFTER UPDATE OF content, agent_response, tool ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes
        - length(CAST(old.content AS BLOB)) - COALESCE(length(CAST(old.agent_response AS BLOB)), 0) - COALESCE(length(CAST(old.tool AS BLOB)), 0)
        + length(CAST(new.content AS BLOB)) + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd

COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Back to an INTEGER column, by the same rebuild. Decimal ids become integers
-- again; any other id stays as it is (the column's integer affinity keeps
-- text it cannot convert), so nothing is lost.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

-- The triggers that keep stored_bytes (00003) are on messages but write to
-- exchanges: while the old table is gone they would name a missing table,
-- which the rename refuses, so they are dropped here and made again below.
DROP TRIGGER messages_bytes_insert;
DROP TRIGGER messages_bytes_delete;
DROP TRIGGER messages_bytes_update;

CREATE TABLE exchanges_old (
    id                INTEGER PRIMARY KEY,
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope             TEXT    NOT NULL DEFAULT 'general' CHECK (scope IN ('general', 'page', 'job')),
    page_id           INTEGER REFERENCES pages (id) ON DELETE CASCADE,
    job_id            INTEGER,
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
INSERT INTO exchanges_old SELECT id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
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
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_bytes_delete AFTER DELETE ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes - length(CAST(old.content AS BLOB))
        - COALESCE(length(CAST(old.agent_response AS BLOB)), 0) - COALESCE(length(CAST(old.tool AS BLOB)), 0)
    WHERE id = old.exchange_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_bytes_update AFTER UPDATE OF content, agent_response, tool ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes
        - length(CAST(old.content AS BLOB)) - COALESCE(length(CAST(old.agent_response AS BLOB)), 0) - COALESCE(length(CAST(old.tool AS BLOB)), 0)
        + length(CAST(new.content AS BLOB)) + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd

COMMIT;
PRAGMA foreign_keys = ON;
