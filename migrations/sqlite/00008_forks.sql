-- +goose Up
-- Forks (issue 11). A fork is an exchange whose log starts with a copy of
-- its parent's entries before a seq (exchanges.forked_from_id and
-- forked_at_seq, from 00001). The prefix is copied in one INSERT … SELECT:
-- each copied row names in copy_of the row it copies (the first row of the
-- chain: a copy of a copy names the original), so that a family's shared
-- entry stays one entry wherever it is counted once.
--
-- * Search indexes only rows with copy_of NULL: a shared entry is found
--   once, at its original.
-- * stored_bytes: the insert trigger skips copies, and the store adds the
--   copied prefix's sum once in the fork's transaction (10,000 updates of
--   one exchange row would cost more than the copy itself).
-- * Deleting an original while copies of it remain promotes one copy (the
--   oldest) to be the original: copy_of NULL, indexed; the other copies are
--   pointed at it. It happens in the delete's own transaction, whatever
--   deletes the row (an exchange, a page, an account, retention).
ALTER TABLE messages ADD COLUMN copy_of INTEGER;
CREATE INDEX messages_copy_of ON messages (copy_of) WHERE copy_of IS NOT NULL;
-- The dashboard counts what was written, originals only (a copy was
-- written once, where it came from): its index leaves copies out, which
-- also spares a fork one index insert per copied row.
DROP INDEX messages_created;
CREATE INDEX messages_created ON messages (created_at) WHERE copy_of IS NULL;

-- The full-text index's view and triggers of 00007, skipping copies. The
-- update trigger also follows copy_of: a promoted copy enters the index.
DROP VIEW messages_searchable;
CREATE VIEW messages_searchable AS
    SELECT id, content FROM messages WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result');
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result') BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content
        WHERE new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
END;
-- +goose StatementEnd

DROP TRIGGER messages_bytes_insert;
-- +goose StatementBegin
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd

-- The heir is the oldest copy; it keeps copy_of = old.id until the others
-- point at it, so the MIN below names the same row throughout.
-- +goose StatementBegin
CREATE TRIGGER messages_copies_promote AFTER DELETE ON messages
WHEN old.copy_of IS NULL BEGIN
    UPDATE messages SET copy_of = (SELECT MIN(id) FROM messages WHERE copy_of = old.id)
    WHERE copy_of = old.id AND id > (SELECT MIN(id) FROM messages WHERE copy_of = old.id);
    UPDATE messages SET copy_of = NULL WHERE copy_of = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_copies_promote;
DROP TRIGGER messages_bytes_insert;
-- +goose StatementBegin
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP VIEW messages_searchable;
CREATE VIEW messages_searchable AS
    SELECT id, content FROM messages WHERE role IN ('user', 'assistant', 'tool_result');
-- Copies become entries of their own: they enter the index.
INSERT INTO messages_fts (rowid, content)
    SELECT id, content FROM messages
    WHERE copy_of IS NOT NULL AND role IN ('user', 'assistant', 'tool_result');
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant', 'tool_result') BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.role IN ('user', 'assistant', 'tool_result') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content WHERE new.role IN ('user', 'assistant', 'tool_result');
END;
-- +goose StatementEnd
DROP INDEX messages_created;
CREATE INDEX messages_created ON messages (created_at);
DROP INDEX messages_copy_of;
ALTER TABLE messages DROP COLUMN copy_of;
