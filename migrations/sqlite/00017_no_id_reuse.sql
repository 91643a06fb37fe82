-- +goose NO TRANSACTION
-- +goose Up
-- Ids are never given twice (issue 22). Without AUTOINCREMENT SQLite gives
-- a new row max(id) + 1, so deleting the newest account handed its id to
-- the next one to register: a session of the deleted account (which names
-- its user by id, at session_epoch 0 like any new account) spoke as the
-- new one, and so did its exchange and message ids. With AUTOINCREMENT an
-- id, once used, is never used again (sqlite_sequence keeps the highest).
-- Every table with an INTEGER PRIMARY KEY gets it, those whose key is
-- another row's id included, so that the rule has no exceptions to
-- remember; a test reads sqlite_master so that a new table cannot miss it.
-- PostgreSQL's identity columns never reuse ids already.
--
-- SQLite cannot add AUTOINCREMENT to a table: each is rebuilt as 00006
-- and 00009 did, foreign keys off (hence NO TRANSACTION and the explicit
-- BEGIN / COMMIT) and legacy_alter_table on (the triggers and the view
-- that name a table are left alone while it is briefly gone). Every row is
-- copied with its id; the indexes and the triggers of each table come back
-- exactly as they stood after 00016 (a test compares sqlite_master); the
-- full-text indexes keep their entries, since ids and text are the same.
PRAGMA foreign_keys = OFF;
PRAGMA legacy_alter_table = ON;
BEGIN IMMEDIATE;

-- users
CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    is_admin      BOOLEAN NOT NULL DEFAULT 0,
    created_at    DATETIME NOT NULL,
    disabled      BOOLEAN NOT NULL DEFAULT 0,
    session_epoch INTEGER NOT NULL DEFAULT 0,
    username_key  TEXT
);
INSERT INTO users_new (id, username, password_hash, is_admin, created_at, disabled, session_epoch, username_key)
SELECT id, username, password_hash, is_admin, created_at, disabled, session_epoch, username_key FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
CREATE UNIQUE INDEX users_username_fold ON users (username_key);

-- api_keys
CREATE TABLE api_keys_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash     TEXT    NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    name         TEXT    NOT NULL DEFAULT 'key'
);
INSERT INTO api_keys_new (id, user_id, key_hash, created_at, last_used_at, name)
SELECT id, user_id, key_hash, created_at, last_used_at, name FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
CREATE INDEX api_keys_user ON api_keys (user_id);

-- pages
CREATE TABLE pages_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    deleted_at DATETIME,
    uid        TEXT    NOT NULL DEFAULT ''
);
INSERT INTO pages_new (id, user_id, title, content, created_at, updated_at, deleted_at, uid)
SELECT id, user_id, title, content, created_at, updated_at, deleted_at, uid FROM pages;
DROP TABLE pages;
ALTER TABLE pages_new RENAME TO pages;
CREATE INDEX pages_user_updated ON pages (user_id, updated_at DESC, id DESC);
CREATE UNIQUE INDEX pages_uid ON pages (user_id, uid) WHERE uid <> '';

-- page_revisions
CREATE TABLE page_revisions_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id     INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    content     TEXT    NOT NULL,
    edit_source TEXT    NOT NULL CHECK (edit_source IN ('user', 'agent', 'restore')),
    message_id  INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    created_at  DATETIME NOT NULL,
    uid         TEXT    NOT NULL DEFAULT ''
);
INSERT INTO page_revisions_new (id, page_id, content, edit_source, message_id, created_at, uid)
SELECT id, page_id, content, edit_source, message_id, created_at, uid FROM page_revisions;
DROP TABLE page_revisions;
ALTER TABLE page_revisions_new RENAME TO page_revisions;
CREATE INDEX page_revisions_page ON page_revisions (page_id, id);
CREATE INDEX page_revisions_message ON page_revisions (message_id) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX page_revisions_uid ON page_revisions (page_id, uid) WHERE uid <> '';

-- exchanges
CREATE TABLE exchanges_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
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
    uid               TEXT    NOT NULL DEFAULT '',
    first_query_id    INTEGER,
    first_reply_id    INTEGER,
    last_reply_id     INTEGER,
    CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL AND parent_id IS NULL)
        OR (scope = 'subrun' AND parent_id IS NOT NULL AND parent_seq IS NOT NULL AND page_id IS NULL AND job_id IS NULL))
);
INSERT INTO exchanges_new (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq, pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts, stored_bytes, parent_id, parent_seq, uid, first_query_id, first_reply_id, last_reply_id)
SELECT id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq, pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts, stored_bytes, parent_id, parent_seq, uid, first_query_id, first_reply_id, last_reply_id FROM exchanges;
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
CREATE INDEX exchanges_parent ON exchanges (parent_id, parent_seq) WHERE parent_id IS NOT NULL;
CREATE UNIQUE INDEX exchanges_uid ON exchanges (user_id, uid) WHERE uid <> '';
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

-- messages
CREATE TABLE messages_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
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
    edit_mode        TEXT    CHECK (edit_mode IN ('full_replacement', 'section_patch')),
    copy_of          INTEGER,
    uid              TEXT    NOT NULL DEFAULT '',
    UNIQUE (exchange_id, seq),
    CHECK ((role = 'error') = (seq IS NULL))
);
INSERT INTO messages_new (id, exchange_id, seq, role, content, agent_type, agent_response, tool, feedback, feedback_comment, created_at, edit_mode, copy_of, uid)
SELECT id, exchange_id, seq, role, content, agent_type, agent_response, tool, feedback, feedback_comment, created_at, edit_mode, copy_of, uid FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_exchange_id ON messages (exchange_id, id);
CREATE INDEX messages_exchange_role ON messages (exchange_id, role, id);
CREATE INDEX messages_edit_mode ON messages (exchange_id) WHERE edit_mode IS NOT NULL;
CREATE INDEX messages_feedback_down ON messages (exchange_id) WHERE feedback = 0;
CREATE INDEX messages_created ON messages (created_at) WHERE copy_of IS NULL;
CREATE UNIQUE INDEX messages_uid ON messages (exchange_id, uid) WHERE uid <> '';
CREATE INDEX messages_copies ON messages (exchange_id, copy_of) WHERE copy_of IS NOT NULL;
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
-- +goose StatementBegin
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0),
        first_query_id = CASE WHEN new.role = 'user' AND (first_query_id IS NULL OR new.id < first_query_id)
            THEN new.id ELSE first_query_id END,
        first_reply_id = CASE WHEN new.role = 'assistant' AND (first_reply_id IS NULL OR new.id < first_reply_id)
            THEN new.id ELSE first_reply_id END,
        last_reply_id = CASE WHEN new.role = 'assistant' AND (last_reply_id IS NULL OR new.id > last_reply_id)
            THEN new.id ELSE last_reply_id END
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result')
    AND new.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result')
    AND old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of ON messages
WHEN old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content
        WHERE new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_copies_promote AFTER DELETE ON messages
WHEN old.copy_of IS NULL BEGIN
    UPDATE messages SET copy_of = (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)))
    WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id))
    AND id > (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)));
    UPDATE messages SET copy_of = NULL WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id));
END;
-- +goose StatementEnd

-- proposal_rejections
CREATE TABLE proposal_rejections_new (
    message_id INTEGER PRIMARY KEY AUTOINCREMENT REFERENCES messages (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL
);
INSERT INTO proposal_rejections_new (message_id, user_id, created_at)
SELECT message_id, user_id, created_at FROM proposal_rejections;
DROP TABLE proposal_rejections;
ALTER TABLE proposal_rejections_new RENAME TO proposal_rejections;

-- admin_audit
CREATE TABLE admin_audit_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    admin_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    admin_name   TEXT    NOT NULL,
    exchange_id  INTEGER REFERENCES exchanges (id) ON DELETE SET NULL,
    exchange_ref INTEGER NOT NULL,
    owner_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    owner_name   TEXT    NOT NULL,
    reason       TEXT    NOT NULL DEFAULT '',
    created_at   DATETIME NOT NULL
);
INSERT INTO admin_audit_new (id, admin_id, admin_name, exchange_id, exchange_ref, owner_id, owner_name, reason, created_at)
SELECT id, admin_id, admin_name, exchange_id, exchange_ref, owner_id, owner_name, reason, created_at FROM admin_audit;
DROP TABLE admin_audit;
ALTER TABLE admin_audit_new RENAME TO admin_audit;
CREATE INDEX admin_audit_exchange ON admin_audit (exchange_id, id);
CREATE INDEX admin_audit_admin ON admin_audit (admin_id);
CREATE INDEX admin_audit_owner ON admin_audit (owner_id);

-- settings
CREATE TABLE settings_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id = 1),
    retention_enabled BOOLEAN NOT NULL DEFAULT 0,
    retention_days    INTEGER NOT NULL DEFAULT 365 CHECK (retention_days >= 1),
    updated_at        DATETIME NOT NULL
);
INSERT INTO settings_new (id, retention_enabled, retention_days, updated_at)
SELECT id, retention_enabled, retention_days, updated_at FROM settings;
DROP TABLE settings;
ALTER TABLE settings_new RENAME TO settings;

-- retention_runs
CREATE TABLE retention_runs_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO retention_runs_new (id, source, admin_id, dry_run, days, cutoff, started_at, finished_at, deleted_exchanges, deleted_messages, error)
SELECT id, source, admin_id, dry_run, days, cutoff, started_at, finished_at, deleted_exchanges, deleted_messages, error FROM retention_runs;
DROP TABLE retention_runs;
ALTER TABLE retention_runs_new RENAME TO retention_runs;

-- sub_runs
CREATE TABLE sub_runs_new (
    exchange_id INTEGER PRIMARY KEY AUTOINCREMENT REFERENCES exchanges (id) ON DELETE CASCADE,
    agent       TEXT     NOT NULL,
    task        TEXT     NOT NULL DEFAULT '',
    status      TEXT     NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
    result      TEXT     NOT NULL DEFAULT '',
    started_at  DATETIME NOT NULL,
    finished_at DATETIME
);
INSERT INTO sub_runs_new (exchange_id, agent, task, status, result, started_at, finished_at)
SELECT exchange_id, agent, task, status, result, started_at, finished_at FROM sub_runs;
DROP TABLE sub_runs;
ALTER TABLE sub_runs_new RENAME TO sub_runs;

-- turn_stop_requests
CREATE TABLE turn_stop_requests_new (
  exchange_id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner TEXT NOT NULL,
  requested_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO turn_stop_requests_new (exchange_id, owner, requested_at)
SELECT exchange_id, owner, requested_at FROM turn_stop_requests;
DROP TABLE turn_stop_requests;
ALTER TABLE turn_stop_requests_new RENAME TO turn_stop_requests;

-- messages_fts_state
CREATE TABLE messages_fts_state_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id = 1),
    indexed_through INTEGER NOT NULL
);
INSERT INTO messages_fts_state_new (id, indexed_through)
SELECT id, indexed_through FROM messages_fts_state;
DROP TABLE messages_fts_state;
ALTER TABLE messages_fts_state_new RENAME TO messages_fts_state;

-- fork_families
CREATE TABLE fork_families_new (
    exchange_id INTEGER PRIMARY KEY AUTOINCREMENT,
    family_id   INTEGER NOT NULL
);
INSERT INTO fork_families_new (exchange_id, family_id)
SELECT exchange_id, family_id FROM fork_families;
DROP TABLE fork_families;
ALTER TABLE fork_families_new RENAME TO fork_families;
CREATE INDEX fork_families_family ON fork_families (family_id);

-- The copies set each sequence to the highest id kept. Ids above it that
-- were given and deleted before this migration are still remembered in a
-- few places: the search watermark (a message id it indexed through), and
-- the exchange numbers the audit trail and the fork families keep. The
-- sequences start above those too.
UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT indexed_through FROM messages_fts_state), 0))
WHERE name = 'messages';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'messages', indexed_through FROM messages_fts_state
WHERE indexed_through > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages');
INSERT INTO sqlite_sequence (name, seq)
SELECT 'exchanges', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'exchanges');
UPDATE sqlite_sequence SET seq = MAX(seq,
    COALESCE((SELECT MAX(exchange_ref) FROM admin_audit), 0),
    COALESCE((SELECT MAX(exchange_id) FROM fork_families), 0),
    COALESCE((SELECT MAX(family_id) FROM fork_families), 0))
WHERE name = 'exchanges';

COMMIT;
PRAGMA legacy_alter_table = OFF;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The same rebuild, back to ids without AUTOINCREMENT, and the sequences
-- forgotten.
PRAGMA foreign_keys = OFF;
PRAGMA legacy_alter_table = ON;
BEGIN IMMEDIATE;

-- users
CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    is_admin      BOOLEAN NOT NULL DEFAULT 0,
    created_at    DATETIME NOT NULL,
    disabled      BOOLEAN NOT NULL DEFAULT 0,
    session_epoch INTEGER NOT NULL DEFAULT 0,
    username_key  TEXT
);
INSERT INTO users_new (id, username, password_hash, is_admin, created_at, disabled, session_epoch, username_key)
SELECT id, username, password_hash, is_admin, created_at, disabled, session_epoch, username_key FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;
CREATE UNIQUE INDEX users_username_fold ON users (username_key);

-- api_keys
CREATE TABLE api_keys_new (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash     TEXT    NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    name         TEXT    NOT NULL DEFAULT 'key'
);
INSERT INTO api_keys_new (id, user_id, key_hash, created_at, last_used_at, name)
SELECT id, user_id, key_hash, created_at, last_used_at, name FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
CREATE INDEX api_keys_user ON api_keys (user_id);

-- pages
CREATE TABLE pages_new (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    deleted_at DATETIME,
    uid        TEXT    NOT NULL DEFAULT ''
);
INSERT INTO pages_new (id, user_id, title, content, created_at, updated_at, deleted_at, uid)
SELECT id, user_id, title, content, created_at, updated_at, deleted_at, uid FROM pages;
DROP TABLE pages;
ALTER TABLE pages_new RENAME TO pages;
CREATE INDEX pages_user_updated ON pages (user_id, updated_at DESC, id DESC);
CREATE UNIQUE INDEX pages_uid ON pages (user_id, uid) WHERE uid <> '';

-- page_revisions
CREATE TABLE page_revisions_new (
    id          INTEGER PRIMARY KEY,
    page_id     INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    content     TEXT    NOT NULL,
    edit_source TEXT    NOT NULL CHECK (edit_source IN ('user', 'agent', 'restore')),
    message_id  INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    created_at  DATETIME NOT NULL,
    uid         TEXT    NOT NULL DEFAULT ''
);
INSERT INTO page_revisions_new (id, page_id, content, edit_source, message_id, created_at, uid)
SELECT id, page_id, content, edit_source, message_id, created_at, uid FROM page_revisions;
DROP TABLE page_revisions;
ALTER TABLE page_revisions_new RENAME TO page_revisions;
CREATE INDEX page_revisions_page ON page_revisions (page_id, id);
CREATE INDEX page_revisions_message ON page_revisions (message_id) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX page_revisions_uid ON page_revisions (page_id, uid) WHERE uid <> '';

-- exchanges
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
    uid               TEXT    NOT NULL DEFAULT '',
    first_query_id    INTEGER,
    first_reply_id    INTEGER,
    last_reply_id     INTEGER,
    CHECK ((scope = 'general' AND page_id IS NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'page' AND page_id IS NOT NULL AND job_id IS NULL AND parent_id IS NULL)
        OR (scope = 'job' AND job_id IS NOT NULL AND page_id IS NULL AND parent_id IS NULL)
        OR (scope = 'subrun' AND parent_id IS NOT NULL AND parent_seq IS NOT NULL AND page_id IS NULL AND job_id IS NULL))
);
INSERT INTO exchanges_new (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq, pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts, stored_bytes, parent_id, parent_seq, uid, first_query_id, first_reply_id, last_reply_id)
SELECT id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq, pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner, turn_heartbeat_at, turn_attempts, stored_bytes, parent_id, parent_seq, uid, first_query_id, first_reply_id, last_reply_id FROM exchanges;
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
CREATE INDEX exchanges_parent ON exchanges (parent_id, parent_seq) WHERE parent_id IS NOT NULL;
CREATE UNIQUE INDEX exchanges_uid ON exchanges (user_id, uid) WHERE uid <> '';
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

-- messages
CREATE TABLE messages_new (
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
    edit_mode        TEXT    CHECK (edit_mode IN ('full_replacement', 'section_patch')),
    copy_of          INTEGER,
    uid              TEXT    NOT NULL DEFAULT '',
    UNIQUE (exchange_id, seq),
    CHECK ((role = 'error') = (seq IS NULL))
);
INSERT INTO messages_new (id, exchange_id, seq, role, content, agent_type, agent_response, tool, feedback, feedback_comment, created_at, edit_mode, copy_of, uid)
SELECT id, exchange_id, seq, role, content, agent_type, agent_response, tool, feedback, feedback_comment, created_at, edit_mode, copy_of, uid FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_exchange_id ON messages (exchange_id, id);
CREATE INDEX messages_exchange_role ON messages (exchange_id, role, id);
CREATE INDEX messages_edit_mode ON messages (exchange_id) WHERE edit_mode IS NOT NULL;
CREATE INDEX messages_feedback_down ON messages (exchange_id) WHERE feedback = 0;
CREATE INDEX messages_created ON messages (created_at) WHERE copy_of IS NULL;
CREATE UNIQUE INDEX messages_uid ON messages (exchange_id, uid) WHERE uid <> '';
CREATE INDEX messages_copies ON messages (exchange_id, copy_of) WHERE copy_of IS NOT NULL;
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
-- +goose StatementBegin
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0),
        first_query_id = CASE WHEN new.role = 'user' AND (first_query_id IS NULL OR new.id < first_query_id)
            THEN new.id ELSE first_query_id END,
        first_reply_id = CASE WHEN new.role = 'assistant' AND (first_reply_id IS NULL OR new.id < first_reply_id)
            THEN new.id ELSE first_reply_id END,
        last_reply_id = CASE WHEN new.role = 'assistant' AND (last_reply_id IS NULL OR new.id > last_reply_id)
            THEN new.id ELSE last_reply_id END
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result')
    AND new.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result')
    AND old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of ON messages
WHEN old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content
        WHERE new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_copies_promote AFTER DELETE ON messages
WHEN old.copy_of IS NULL BEGIN
    UPDATE messages SET copy_of = (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)))
    WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id))
    AND id > (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)));
    UPDATE messages SET copy_of = NULL WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id));
END;
-- +goose StatementEnd

-- proposal_rejections
CREATE TABLE proposal_rejections_new (
    message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL
);
INSERT INTO proposal_rejections_new (message_id, user_id, created_at)
SELECT message_id, user_id, created_at FROM proposal_rejections;
DROP TABLE proposal_rejections;
ALTER TABLE proposal_rejections_new RENAME TO proposal_rejections;

-- admin_audit
CREATE TABLE admin_audit_new (
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
INSERT INTO admin_audit_new (id, admin_id, admin_name, exchange_id, exchange_ref, owner_id, owner_name, reason, created_at)
SELECT id, admin_id, admin_name, exchange_id, exchange_ref, owner_id, owner_name, reason, created_at FROM admin_audit;
DROP TABLE admin_audit;
ALTER TABLE admin_audit_new RENAME TO admin_audit;
CREATE INDEX admin_audit_exchange ON admin_audit (exchange_id, id);
CREATE INDEX admin_audit_admin ON admin_audit (admin_id);
CREATE INDEX admin_audit_owner ON admin_audit (owner_id);

-- settings
CREATE TABLE settings_new (
    id                INTEGER PRIMARY KEY CHECK (id = 1),
    retention_enabled BOOLEAN NOT NULL DEFAULT 0,
    retention_days    INTEGER NOT NULL DEFAULT 365 CHECK (retention_days >= 1),
    updated_at        DATETIME NOT NULL
);
INSERT INTO settings_new (id, retention_enabled, retention_days, updated_at)
SELECT id, retention_enabled, retention_days, updated_at FROM settings;
DROP TABLE settings;
ALTER TABLE settings_new RENAME TO settings;

-- retention_runs
CREATE TABLE retention_runs_new (
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
INSERT INTO retention_runs_new (id, source, admin_id, dry_run, days, cutoff, started_at, finished_at, deleted_exchanges, deleted_messages, error)
SELECT id, source, admin_id, dry_run, days, cutoff, started_at, finished_at, deleted_exchanges, deleted_messages, error FROM retention_runs;
DROP TABLE retention_runs;
ALTER TABLE retention_runs_new RENAME TO retention_runs;

-- sub_runs
CREATE TABLE sub_runs_new (
    exchange_id INTEGER PRIMARY KEY REFERENCES exchanges (id) ON DELETE CASCADE,
    agent       TEXT     NOT NULL,
    task        TEXT     NOT NULL DEFAULT '',
    status      TEXT     NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'failed')),
    result      TEXT     NOT NULL DEFAULT '',
    started_at  DATETIME NOT NULL,
    finished_at DATETIME
);
INSERT INTO sub_runs_new (exchange_id, agent, task, status, result, started_at, finished_at)
SELECT exchange_id, agent, task, status, result, started_at, finished_at FROM sub_runs;
DROP TABLE sub_runs;
ALTER TABLE sub_runs_new RENAME TO sub_runs;

-- turn_stop_requests
CREATE TABLE turn_stop_requests_new (
  exchange_id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  requested_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO turn_stop_requests_new (exchange_id, owner, requested_at)
SELECT exchange_id, owner, requested_at FROM turn_stop_requests;
DROP TABLE turn_stop_requests;
ALTER TABLE turn_stop_requests_new RENAME TO turn_stop_requests;

-- messages_fts_state
CREATE TABLE messages_fts_state_new (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through INTEGER NOT NULL
);
INSERT INTO messages_fts_state_new (id, indexed_through)
SELECT id, indexed_through FROM messages_fts_state;
DROP TABLE messages_fts_state;
ALTER TABLE messages_fts_state_new RENAME TO messages_fts_state;

-- fork_families
CREATE TABLE fork_families_new (
    exchange_id INTEGER PRIMARY KEY,
    family_id   INTEGER NOT NULL
);
INSERT INTO fork_families_new (exchange_id, family_id)
SELECT exchange_id, family_id FROM fork_families;
DROP TABLE fork_families;
ALTER TABLE fork_families_new RENAME TO fork_families;
CREATE INDEX fork_families_family ON fork_families (family_id);

DELETE FROM sqlite_sequence WHERE name IN ('users', 'api_keys', 'pages', 'page_revisions', 'exchanges', 'messages',
    'proposal_rejections', 'admin_audit', 'settings', 'retention_runs', 'sub_runs', 'turn_stop_requests',
    'messages_fts_state', 'fork_families');

COMMIT;
PRAGMA legacy_alter_table = OFF;
PRAGMA foreign_keys = ON;
