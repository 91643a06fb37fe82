-- +goose Up
-- Search scoped by the index (issue 31). The full-text indexes held words
-- only: a search listed every message of the whole database holding its
-- words, and the join to exchanges dropped those of other people's chats,
-- or of the chats outside the project searched, one by one (about 5 us a
-- hit). A common word searched in a project of a hundred chats read a
-- million-message index's hits for it (0.3-0.5 s in palaver bench's
-- search_p50_ms_project), and a person with twenty chats searching "zeb*"
-- paid for another's hundred thousand words that start so.
--
-- Each indexed message and title now carries its chat in a second
-- column, chat: 'c' and the exchange's id ("c12"). A search over few
-- enough chats (a project's, or a person's when they have few) asks for
-- its words in the first column AND one of its chats' tokens in chat
-- (models/search.go), so FTS5 merges the words' lists with those chats'
-- and never lists the rest. The join's filters stay: they decide, the
-- tokens make them cheap. Over many chats the tokens are left out (bm25
-- counts every row of each of a query's phrases for its weights: a
-- person's hundred thousand chats would cost more than the join saves).
--
-- The token is the chat's, not its project's or its owner's: a message
-- never changes chat, so a chat's move between projects changes nothing
-- here (with a project's token, moving the bench's 10,000 chats into
-- projects re-indexed their 100,000 messages under FTS5's secure-delete
-- for minutes, until another writer gave up: "database is locked"), and
-- a row's token is known from the row itself, also when its chat is
-- being deleted.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
DROP TABLE messages_reasoning_fts;
DROP VIEW messages_searchable;
DROP VIEW messages_reasoning_searchable;

CREATE VIEW messages_searchable AS
    SELECT id, content, 'c' || exchange_id AS chat FROM messages
    WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result')
        AND id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, chat, content = 'messages_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

CREATE VIEW messages_reasoning_searchable AS
    SELECT id, json_extract(agent_response, '$.reasoning') AS reasoning, 'c' || exchange_id AS chat FROM messages
    WHERE copy_of IS NULL AND role = 'assistant'
        AND COALESCE(json_extract(agent_response, '$.reasoning'), '') <> ''
        AND id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_reasoning_fts USING fts5 (
    reasoning, chat, content = 'messages_reasoning_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts) VALUES ('rebuild');

-- The triggers of 00030, each row with its chat.
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result')
    AND new.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (rowid, content, chat) VALUES (new.id, new.content, 'c' || new.exchange_id);
    INSERT INTO messages_reasoning_fts (rowid, reasoning, chat)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning'), 'c' || new.exchange_id
        WHERE new.role = 'assistant' AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result')
    AND old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, chat) VALUES ('delete', old.id, old.content, 'c' || old.exchange_id);
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, chat)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning'), 'c' || old.exchange_id
        WHERE old.role = 'assistant' AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of, agent_response, exchange_id ON messages
WHEN old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, chat)
        SELECT 'delete', old.id, old.content, 'c' || old.exchange_id
        WHERE old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content, chat)
        SELECT new.id, new.content, 'c' || new.exchange_id
        WHERE new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, chat)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning'), 'c' || old.exchange_id
        WHERE old.copy_of IS NULL AND old.role = 'assistant'
            AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
    INSERT INTO messages_reasoning_fts (rowid, reasoning, chat)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning'), 'c' || new.exchange_id
        WHERE new.copy_of IS NULL AND new.role = 'assistant'
            AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd

-- Titles likewise (a common word's thousands of titles were each read
-- from exchanges to be dropped).
DROP TRIGGER exchanges_fts_insert;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_update;
DROP TABLE exchanges_fts;
CREATE VIEW exchanges_searchable AS
    SELECT id, title, 'c' || id AS chat FROM exchanges;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, chat, content = 'exchanges_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title, chat) VALUES (new.id, new.title, 'c' || new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, chat) VALUES ('delete', old.id, old.title, 'c' || old.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title ON exchanges
WHEN old.title IS NOT new.title BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, chat) VALUES ('delete', old.id, old.title, 'c' || old.id);
    INSERT INTO exchanges_fts (rowid, title, chat) VALUES (new.id, new.title, 'c' || new.id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP TABLE messages_reasoning_fts;
DROP TABLE messages_fts;
DROP VIEW messages_reasoning_searchable;
DROP VIEW messages_searchable;

CREATE VIEW messages_searchable AS
    SELECT id, content FROM messages
    WHERE copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result')
        AND id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

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

DROP TRIGGER exchanges_fts_update;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_insert;
DROP TABLE exchanges_fts;
DROP VIEW exchanges_searchable;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, content = 'exchanges', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');
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
