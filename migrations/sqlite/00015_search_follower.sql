-- +goose Up
-- Search indexing off the turn's commit (issue 16). The message index of
-- 00007/00008 was kept in step by triggers inside the transaction that
-- writes a message, so that every turn's commits paid FTS5's tokenizing and
-- its per-transaction segment flush (about six of a two-row commit's
-- fifteen WAL pages, and a third of its CPU). Now the store indexes new
-- messages in batches, a little after they are written (models/
-- search_index.go), and every search first indexes whatever is still
-- waiting, so that a message is found as soon as its write has returned.
--
-- The watermark: every message with id <= indexed_through is in the index
-- as it is now (when it is searchable: an original user message, reply or
-- tool result); no message above it is in the index at all. A batch
-- indexes the messages above the watermark and moves it, in one
-- transaction: a crash loses both or neither, and the next batch (at
-- start-up, or the next search) does it again.
CREATE TABLE messages_fts_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through INTEGER NOT NULL
);
-- The triggers of 00008 have indexed every message so far.
INSERT INTO messages_fts_state (id, indexed_through) SELECT 1, COALESCE(MAX(id), 0) FROM messages;

-- The index's content is the searchable messages at or below the
-- watermark: exactly what it holds, so FTS5's integrity-check (rank 1)
-- compares like with like even while messages wait, and 'rebuild' builds
-- the same index.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP VIEW messages_searchable;
CREATE VIEW messages_searchable AS
    SELECT id, content FROM messages
    WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result')
        AND id <= (SELECT indexed_through FROM messages_fts_state);

-- The triggers act on the index for rows at or below the watermark only:
-- a row above it is not in the index (an external-content index told to
-- delete what it never held is corrupt), and the next batch reads it as it
-- is then, or not at all once it is deleted. A new message lands at or
-- below the watermark only when the highest ids were deleted and SQLite
-- gives one of them again (messages.id is no AUTOINCREMENT): it is indexed
-- at once, as before.
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

-- A promoted copy (00008's messages_copies_promote sets its copy_of NULL)
-- enters the index here when it is at or below the watermark, and with the
-- next batch when it is above.
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

-- +goose Down
-- The messages still waiting enter the index, and 00008's triggers return.
INSERT INTO messages_fts (rowid, content)
    SELECT id, content FROM messages
    WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result')
        AND id > (SELECT indexed_through FROM messages_fts_state);
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP VIEW messages_searchable;
CREATE VIEW messages_searchable AS
    SELECT id, content FROM messages WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result');
DROP TABLE messages_fts_state;

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
