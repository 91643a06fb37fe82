-- +goose Up
-- Models (issue 29), the rest: each person's favourite models (the
-- picker lists them first), and the opt-in that lets search match what
-- replies' reasoning says.

CREATE TABLE model_favourites (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    model_id   INTEGER NOT NULL REFERENCES llm_models (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    UNIQUE (user_id, model_id)
);
CREATE INDEX model_favourites_model ON model_favourites (model_id);

-- Off by default: a reply's reasoning is the model talking to itself, and
-- a person asks for it to be found.
ALTER TABLE users ADD COLUMN search_reasoning BOOLEAN NOT NULL DEFAULT 0;

-- Reasoning has its own index, kept always, consulted only for those who
-- opted in: an opt-in then needs no re-indexing, and the turn pays
-- nothing, since this index is filled by the same batches as messages_fts
-- (models/search_index.go: one more INSERT per batch, not per turn). Its
-- content is the original replies with reasoning at or below the
-- watermark, as messages_fts's is.
CREATE VIEW messages_reasoning_searchable AS
    SELECT id, json_extract(agent_response, '$.reasoning') AS reasoning FROM messages
    WHERE copy_of IS NULL AND role = 'assistant'
        AND COALESCE(json_extract(agent_response, '$.reasoning'), '') <> ''
        AND id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_reasoning_fts USING fts5 (
    reasoning, content = 'messages_reasoning_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts) VALUES ('rebuild');

-- The triggers of 00015 (as 00017 made them again) keep both indexes:
-- the same trigger, the same WHEN, so that a write that does not touch
-- the index costs what it did.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result')
    AND new.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    INSERT INTO messages_reasoning_fts (rowid, reasoning)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning')
        WHERE new.role = 'assistant' AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result')
    AND old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning')
        WHERE old.role = 'assistant' AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of, agent_response ON messages
WHEN old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content
        WHERE new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning')
        WHERE old.copy_of IS NULL AND old.role = 'assistant'
            AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
    INSERT INTO messages_reasoning_fts (rowid, reasoning)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning')
        WHERE new.copy_of IS NULL AND new.role = 'assistant'
            AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
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
DROP TABLE messages_reasoning_fts;
DROP VIEW messages_reasoning_searchable;
ALTER TABLE users DROP COLUMN search_reasoning;
DROP TABLE model_favourites;
