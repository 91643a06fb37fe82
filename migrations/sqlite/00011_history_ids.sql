-- +goose Up
-- The history lists (issue 16): each item shows its exchange's first user
-- message, first reply and the latest reply's rating. Finding them among
-- the messages cost a page of fifty items about a millisecond at a million
-- messages; the exchange's own row now names them, so a page is one keyset
-- read of exchanges and one primary-key read per message shown.
--
-- * first_query_id: the exchange's first user message (lowest id);
-- * first_reply_id: its first assistant message;
-- * last_reply_id: its latest assistant message (the rating shown).
--
-- The insert trigger that keeps stored_bytes (00003, 00008) keeps them too,
-- in the same UPDATE of the exchange's row: every write path that adds a
-- message (turns, imports, the admin's tools) keeps them right without
-- knowing of them. A fork's copied prefix skips that trigger (00008): the
-- store sets the fork's three in the same statement as its stored_bytes.
-- Messages are never deleted one by one (an exchange's go with it), and a
-- promoted copy (00008) keeps its id: nothing else can make them stale.
ALTER TABLE exchanges ADD COLUMN first_query_id INTEGER;
ALTER TABLE exchanges ADD COLUMN first_reply_id INTEGER;
ALTER TABLE exchanges ADD COLUMN last_reply_id INTEGER;

UPDATE exchanges SET
    first_query_id = (SELECT MIN(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'user'),
    first_reply_id = (SELECT MIN(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'assistant'),
    last_reply_id = (SELECT MAX(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'assistant');

DROP TRIGGER messages_bytes_insert;
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

-- +goose Down
DROP TRIGGER messages_bytes_insert;
-- +goose StatementBegin
CREATE TRIGGER messages_bytes_insert AFTER INSERT ON messages
WHEN new.copy_of IS NULL BEGIN
    UPDATE exchanges SET stored_bytes = stored_bytes + length(CAST(new.content AS BLOB))
        + COALESCE(length(CAST(new.agent_response AS BLOB)), 0) + COALESCE(length(CAST(new.tool AS BLOB)), 0)
    WHERE id = new.exchange_id;
END;
-- +goose StatementEnd
ALTER TABLE exchanges DROP COLUMN last_reply_id;
ALTER TABLE exchanges DROP COLUMN first_reply_id;
ALTER TABLE exchanges DROP COLUMN first_query_id;
