-- +goose Up
-- Palaver's first schema. A conversation is an exchange; its messages are an
-- append-only log ordered by seq. Error rows have a NULL seq so they never take
-- a log position and never reach an agent's context.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    is_admin      BOOLEAN NOT NULL DEFAULT 0,
    created_at    DATETIME NOT NULL
);

CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash     TEXT    NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE pages (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    deleted_at DATETIME
);
CREATE INDEX pages_user_updated ON pages (user_id, updated_at DESC, id DESC);

CREATE TABLE exchanges (
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
    CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL))
);
-- The history lists: general chats, a page's chats, most recent activity first.
CREATE INDEX exchanges_user_scope_activity ON exchanges (user_id, scope, updated_at DESC, id DESC);
CREATE INDEX exchanges_page_activity ON exchanges (page_id, updated_at DESC, id DESC) WHERE page_id IS NOT NULL;
CREATE UNIQUE INDEX exchanges_user_job ON exchanges (user_id, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX exchanges_running ON exchanges (turn_status) WHERE turn_status = 'running';
CREATE INDEX exchanges_forked_from ON exchanges (forked_from_id) WHERE forked_from_id IS NOT NULL;

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY,
    exchange_id      INTEGER NOT NULL REFERENCES exchanges (id) ON DELETE CASCADE,
    seq              INTEGER,
    role             TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'tool_call', 'tool_result', 'error')),
    content          TEXT    NOT NULL,
    agent_type       TEXT,
    agent_response   TEXT,
    tool             TEXT,
    feedback         INTEGER CHECK (feedback IN (0, 1)),
    feedback_comment TEXT,
    created_at       DATETIME NOT NULL,
    UNIQUE (exchange_id, seq),
    CHECK ((role = 'error') = (seq IS NULL))
);
-- The whole log of one exchange (error rows included) in write order, and the
-- first user / latest assistant message of an exchange for the history list.
CREATE INDEX messages_exchange_id ON messages (exchange_id, id);
CREATE INDEX messages_exchange_role ON messages (exchange_id, role, id);

CREATE TABLE page_revisions (
    id          INTEGER PRIMARY KEY,
    page_id     INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    content     TEXT    NOT NULL,
    edit_source TEXT    NOT NULL CHECK (edit_source IN ('user', 'agent', 'restore')),
    message_id  INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    created_at  DATETIME NOT NULL
);
CREATE INDEX page_revisions_page ON page_revisions (page_id, id);
CREATE INDEX page_revisions_message ON page_revisions (message_id) WHERE message_id IS NOT NULL;

-- Full-text index over message content, kept in step by triggers.
CREATE VIRTUAL TABLE messages_fts USING fts5 (content, content = 'messages', content_rowid = 'id');

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- scs sessions (sqlite3store's schema).
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- +goose Down
DROP TABLE sessions;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP TABLE messages_fts;
DROP TABLE page_revisions;
DROP TABLE messages;
DROP TABLE exchanges;
DROP TABLE pages;
DROP TABLE api_keys;
DROP TABLE users;
