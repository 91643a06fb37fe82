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
-- Each indexed message and title now carries its scope in a second
-- column: its chat, 'c' and the exchange's id, and the chat's owner, 'u'
-- and the user's id ("c12 u5"). A search over few enough chats (a
-- project's, or a person's when they have few) asks for its words in the
-- first column AND one of its chats' tokens in scope; past that, for a
-- person whose rows are few, AND the person's token (models/search.go,
-- SearchIndexScope). FTS5 then merges the words' lists with the scope's
-- and never lists the rest. The join's filters stay: they decide, the
-- tokens make them cheap. The person's token is not used for a person
-- with many rows: bm25 counts every row of each of a query's phrases for
-- its weights, and a person's million rows cost a search 30 ms however
-- rare its words.
--
-- No project token: a token that changes when a chat moves must be
-- re-indexed with it (with one, moving the bench's 10,000 chats into
-- projects re-indexed their 100,000 messages under FTS5's secure-delete
-- for minutes, until another writer gave up: "database is locked"). A
-- message never changes chat, nor a chat its owner (were it to, the
-- owner's trigger below would re-index the chat's rows).
--
-- An external-content index must be told, to delete a row, the values it
-- indexed. A message's owner is read from its chat; a chat's rows leave
-- the index before the chat is deleted (a BEFORE trigger: when the
-- cascade deletes its messages, the chat and its owner are gone), and
-- the messages' delete trigger acts only while their chat is there.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
DROP TABLE messages_reasoning_fts;
DROP VIEW messages_searchable;
DROP VIEW messages_reasoning_searchable;

CREATE VIEW messages_searchable AS
    SELECT m.id, m.content, 'c' || m.exchange_id || ' u' || e.user_id AS scope
    FROM messages m JOIN exchanges e ON e.id = m.exchange_id
    WHERE m.copy_of IS NULL AND m.role IN ('user', 'assistant', 'tool_result')
        AND m.id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, scope, content = 'messages_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

CREATE VIEW messages_reasoning_searchable AS
    SELECT m.id, json_extract(m.agent_response, '$.reasoning') AS reasoning,
        'c' || m.exchange_id || ' u' || e.user_id AS scope
    FROM messages m JOIN exchanges e ON e.id = m.exchange_id
    WHERE m.copy_of IS NULL AND m.role = 'assistant'
        AND COALESCE(json_extract(m.agent_response, '$.reasoning'), '') <> ''
        AND m.id <= (SELECT indexed_through FROM messages_fts_state);
CREATE VIRTUAL TABLE messages_reasoning_fts USING fts5 (
    reasoning, scope, content = 'messages_reasoning_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_reasoning_fts (messages_reasoning_fts) VALUES ('rebuild');

-- The triggers of 00030, each row with its scope, its chat's owner read
-- from the chat. The delete acts only while the chat is there: a chat's
-- rows leave the index before the chat (exchanges_search_delete), since
-- when the cascade deletes its messages the chat, and its owner, are gone.
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result')
    AND new.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (rowid, content, scope)
        SELECT new.id, new.content, 'c' || new.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = new.exchange_id;
    INSERT INTO messages_reasoning_fts (rowid, reasoning, scope)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning'), 'c' || new.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = new.exchange_id
            AND new.role = 'assistant' AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result')
    AND old.id <= (SELECT indexed_through FROM messages_fts_state)
    AND EXISTS (SELECT 1 FROM exchanges WHERE id = old.exchange_id) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, scope)
        SELECT 'delete', old.id, old.content, 'c' || old.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = old.exchange_id;
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, scope)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning'), 'c' || old.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = old.exchange_id
            AND old.role = 'assistant' AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role, copy_of, agent_response, exchange_id ON messages
WHEN old.id <= (SELECT indexed_through FROM messages_fts_state) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, scope)
        SELECT 'delete', old.id, old.content, 'c' || old.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = old.exchange_id
            AND old.copy_of IS NULL AND old.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_fts (rowid, content, scope)
        SELECT new.id, new.content, 'c' || new.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = new.exchange_id
            AND new.copy_of IS NULL AND new.role IN ('user', 'assistant', 'tool_result');
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, scope)
        SELECT 'delete', old.id, json_extract(old.agent_response, '$.reasoning'), 'c' || old.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = old.exchange_id
            AND old.copy_of IS NULL AND old.role = 'assistant' AND COALESCE(json_extract(old.agent_response, '$.reasoning'), '') <> '';
    INSERT INTO messages_reasoning_fts (rowid, reasoning, scope)
        SELECT new.id, json_extract(new.agent_response, '$.reasoning'), 'c' || new.exchange_id || ' u' || e.user_id FROM exchanges e WHERE e.id = new.exchange_id
            AND new.copy_of IS NULL AND new.role = 'assistant' AND COALESCE(json_extract(new.agent_response, '$.reasoning'), '') <> '';
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_search_delete BEFORE DELETE ON exchanges BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, scope)
        SELECT 'delete', id, content, 'c' || old.id || ' u' || old.user_id FROM messages
        WHERE exchange_id = old.id AND copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result') AND id <= (SELECT indexed_through FROM messages_fts_state);
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, scope)
        SELECT 'delete', id, json_extract(agent_response, '$.reasoning'), 'c' || old.id || ' u' || old.user_id FROM messages
        WHERE exchange_id = old.id AND copy_of IS NULL AND role = 'assistant'
            AND COALESCE(json_extract(agent_response, '$.reasoning'), '') <> '' AND id <= (SELECT indexed_through FROM messages_fts_state);
END;
-- +goose StatementEnd
-- A chat never changes owner; were it to, its rows would follow.
-- +goose StatementBegin
CREATE TRIGGER exchanges_search_owner AFTER UPDATE OF user_id ON exchanges
WHEN old.user_id IS NOT new.user_id BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, scope)
        SELECT 'delete', id, content, 'c' || old.id || ' u' || old.user_id FROM messages
        WHERE exchange_id = old.id AND copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result') AND id <= (SELECT indexed_through FROM messages_fts_state);
    INSERT INTO messages_fts (rowid, content, scope)
        SELECT id, content, 'c' || new.id || ' u' || new.user_id FROM messages
        WHERE exchange_id = new.id AND copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result') AND id <= (SELECT indexed_through FROM messages_fts_state);
    INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rowid, reasoning, scope)
        SELECT 'delete', id, json_extract(agent_response, '$.reasoning'), 'c' || old.id || ' u' || old.user_id FROM messages
        WHERE exchange_id = old.id AND copy_of IS NULL AND role = 'assistant'
            AND COALESCE(json_extract(agent_response, '$.reasoning'), '') <> '' AND id <= (SELECT indexed_through FROM messages_fts_state);
    INSERT INTO messages_reasoning_fts (rowid, reasoning, scope)
        SELECT id, json_extract(agent_response, '$.reasoning'), 'c' || new.id || ' u' || new.user_id FROM messages
        WHERE exchange_id = new.id AND copy_of IS NULL AND role = 'assistant'
            AND COALESCE(json_extract(agent_response, '$.reasoning'), '') <> '' AND id <= (SELECT indexed_through FROM messages_fts_state);
END;
-- +goose StatementEnd

-- Titles likewise (a common word's thousands of titles were each read
-- from exchanges to be dropped).
DROP TRIGGER exchanges_fts_insert;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_update;
DROP TABLE exchanges_fts;
CREATE VIEW exchanges_searchable AS
    SELECT id, title, 'c' || id || ' u' || user_id AS scope FROM exchanges;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, scope, content = 'exchanges_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title, scope) VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope) VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title, user_id ON exchanges
WHEN old.title IS NOT new.title OR old.user_id IS NOT new.user_id BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope) VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id);
    INSERT INTO exchanges_fts (rowid, title, scope) VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER exchanges_search_owner;
DROP TRIGGER exchanges_search_delete;
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
