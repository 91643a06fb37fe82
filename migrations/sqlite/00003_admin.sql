-- +goose Up
-- The admin area: disabled accounts, the audit trail of administrators
-- reading other people's conversations, the retention policy and the log of
-- its runs, each exchange's stored size, and the indexes the admin list and
-- the dashboard filter and sort on.

-- A disabled account cannot sign in and its API keys stop working. Its
-- session_epoch is bumped when it is disabled or its password is reset: a
-- session signed in under an older epoch is signed out (scs sessions are
-- opaque blobs, so they cannot be found and deleted by user).
ALTER TABLE users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;

-- stored_bytes: the UTF-8 bytes an exchange's messages store (content,
-- agent_response and tool JSON), kept by the triggers below so the admin list
-- can sort and page by size through an index instead of summing every log.
ALTER TABLE exchanges ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE exchanges SET stored_bytes = (
    SELECT COALESCE(SUM(length(CAST(content AS BLOB)) + COALESCE(length(CAST(agent_response AS BLOB)), 0)
        + COALESCE(length(CAST(tool AS BLOB)), 0)), 0)
    FROM messages WHERE messages.exchange_id = exchanges.id);

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

-- Deleting a message removes its words from the full-text index, instead of
-- adding a delete marker beside them that leaves them readable in the file
-- until segments merge (PRAGMA secure_delete then zeroes the freed pages);
-- and merge away the markers earlier deletions left.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('optimize');

-- One row per time an administrator opened someone's exchange. The row
-- outlives the exchange (exchange_id becomes NULL, exchange_ref keeps the
-- number) and the accounts (their names are kept), because it is the record
-- of what administrators did.
CREATE TABLE admin_audit (
    id           INTEGER PRIMARY KEY,
    admin_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    admin_name   TEXT    NOT NULL,
    exchange_id  INTEGER REFERENCES exchanges (id) ON DELETE SET NULL,
    exchange_ref INTEGER NOT NULL,
    owner_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    owner_name   TEXT    NOT NULL,
    reason       TEXT    NOT NULL DEFAULT '',
    created_at   DATETIME NOT NULL
);
-- The owner's notice: who opened this exchange, latest first.
CREATE INDEX admin_audit_exchange ON admin_audit (exchange_id, id);
-- Deleting an account sets these to NULL: without an index that would scan
-- the whole log.
CREATE INDEX admin_audit_admin ON admin_audit (admin_id);
CREATE INDEX admin_audit_owner ON admin_audit (owner_id);

-- Settings an administrator changes in the UI: one row.
CREATE TABLE settings (
    id                INTEGER PRIMARY KEY CHECK (id = 1),
    retention_enabled BOOLEAN NOT NULL DEFAULT 0,
    retention_days    INTEGER NOT NULL DEFAULT 365 CHECK (retention_days >= 1),
    updated_at        DATETIME NOT NULL
);
INSERT INTO settings (id, retention_enabled, retention_days, updated_at)
VALUES (1, 0, 365, strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'));

-- Every retention run, scheduled or started by an administrator, dry or not.
CREATE TABLE retention_runs (
    id                INTEGER PRIMARY KEY,
    source            TEXT    NOT NULL CHECK (source IN ('schedule', 'manual')),
    admin_id          INTEGER REFERENCES users (id) ON DELETE SET NULL,
    dry_run           BOOLEAN NOT NULL,
    days              INTEGER NOT NULL,
    cutoff            DATETIME NOT NULL,
    started_at        DATETIME NOT NULL,
    finished_at       DATETIME,
    deleted_exchanges INTEGER NOT NULL DEFAULT 0,
    deleted_messages  INTEGER NOT NULL DEFAULT 0,
    error             TEXT
);

-- The admin list sorts every user's exchanges by activity, size or turns;
-- retention looks for old activity; the dashboard counts by day.
CREATE INDEX exchanges_activity ON exchanges (updated_at DESC, id DESC);
CREATE INDEX exchanges_size ON exchanges (stored_bytes DESC, id DESC);
CREATE INDEX exchanges_turns ON exchanges (turn_count DESC, id DESC);
CREATE INDEX exchanges_created ON exchanges (created_at);
CREATE INDEX messages_created ON messages (created_at);
CREATE INDEX messages_feedback_down ON messages (exchange_id) WHERE feedback = 0;

-- +goose Down
DROP INDEX messages_feedback_down;
DROP INDEX messages_created;
DROP INDEX exchanges_created;
DROP INDEX exchanges_turns;
DROP INDEX exchanges_size;
DROP INDEX exchanges_activity;
DROP TABLE retention_runs;
DROP TABLE settings;
DROP TABLE admin_audit;
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 0);
DROP TRIGGER messages_bytes_update;
DROP TRIGGER messages_bytes_delete;
DROP TRIGGER messages_bytes_insert;
ALTER TABLE exchanges DROP COLUMN stored_bytes;
ALTER TABLE users DROP COLUMN session_epoch;
ALTER TABLE users DROP COLUMN disabled;
