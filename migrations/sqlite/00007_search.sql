-- +goose Up
-- Search (issue 10): the full-text index folds case and accents and stems
-- English ("running" finds "run"), and covers what a person can look for:
-- user messages, replies and tool results (not error rows or tool calls),
-- and exchange titles. Both indexes read their text from the tables they
-- index (external content), so nothing is stored twice, and triggers keep
-- them in step inside the transaction that writes the row: a deleted
-- message is out of the index when its delete commits.

DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP TABLE messages_fts;

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Deleting removes the words from the index at once instead of leaving
-- delete markers beside them (00003).
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (rowid, content)
    SELECT id, content FROM messages WHERE role IN ('user', 'assistant', 'tool_result');

-- The delete and update triggers must name exactly the rows the insert
-- trigger indexed: an external-content index is told what to remove.
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

CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, content = 'exchanges', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (rowid, title) SELECT id, title FROM exchanges;

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

-- Turns update an exchange's header all the time; only a new title
-- touches the index.
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title ON exchanges
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title) VALUES ('delete', old.id, old.title);
    INSERT INTO exchanges_fts (rowid, title) VALUES (new.id, new.title);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER exchanges_fts_update;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_insert;
DROP TABLE exchanges_fts;
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5 (content, content = 'messages', content_rowid = 'id');
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
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
