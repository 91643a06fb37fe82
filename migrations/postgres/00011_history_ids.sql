-- +goose Up
-- The history lists (issue 16): each exchange's row names its first user
-- message, first reply and latest reply (see the SQLite migration of the
-- same number), kept by the insert branch of the trigger that keeps
-- stored_bytes, in the same UPDATE of the exchange's row. A fork's copies
-- skip it; the store sets the fork's three with its stored_bytes.
ALTER TABLE exchanges ADD COLUMN first_query_id BIGINT;
ALTER TABLE exchanges ADD COLUMN first_reply_id BIGINT;
ALTER TABLE exchanges ADD COLUMN last_reply_id BIGINT;

UPDATE exchanges SET
    first_query_id = (SELECT MIN(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'user'),
    first_reply_id = (SELECT MIN(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'assistant'),
    last_reply_id = (SELECT MAX(id) FROM messages WHERE exchange_id = exchanges.id AND role = 'assistant');

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION messages_stored_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE exchanges SET stored_bytes = stored_bytes - octet_length(OLD.content)
            - COALESCE(octet_length(OLD.agent_response), 0) - COALESCE(octet_length(OLD.tool), 0)
        WHERE id = OLD.exchange_id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        UPDATE exchanges SET stored_bytes = stored_bytes + octet_length(NEW.content)
            + COALESCE(octet_length(NEW.agent_response), 0) + COALESCE(octet_length(NEW.tool), 0)
        WHERE id = NEW.exchange_id;
    END IF;
    -- A fork's copies are added up once by the store, not row by row.
    IF TG_OP = 'INSERT' AND NEW.copy_of IS NULL THEN
        UPDATE exchanges SET stored_bytes = stored_bytes + octet_length(NEW.content)
            + COALESCE(octet_length(NEW.agent_response), 0) + COALESCE(octet_length(NEW.tool), 0),
            first_query_id = CASE WHEN NEW.role = 'user' AND (first_query_id IS NULL OR NEW.id < first_query_id)
                THEN NEW.id ELSE first_query_id END,
            first_reply_id = CASE WHEN NEW.role = 'assistant' AND (first_reply_id IS NULL OR NEW.id < first_reply_id)
                THEN NEW.id ELSE first_reply_id END,
            last_reply_id = CASE WHEN NEW.role = 'assistant' AND (last_reply_id IS NULL OR NEW.id > last_reply_id)
                THEN NEW.id ELSE last_reply_id END
        WHERE id = NEW.exchange_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION messages_stored_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE exchanges SET stored_bytes = stored_bytes - octet_length(OLD.content)
            - COALESCE(octet_length(OLD.agent_response), 0) - COALESCE(octet_length(OLD.tool), 0)
        WHERE id = OLD.exchange_id;
    END IF;
    -- A fork's copies are added up once by the store, not row by row.
    IF TG_OP = 'UPDATE' OR (TG_OP = 'INSERT' AND NEW.copy_of IS NULL) THEN
        UPDATE exchanges SET stored_bytes = stored_bytes + octet_length(NEW.content)
            + COALESCE(octet_length(NEW.agent_response), 0) + COALESCE(octet_length(NEW.tool), 0)
        WHERE id = NEW.exchange_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TABLE exchanges DROP COLUMN last_reply_id;
ALTER TABLE exchanges DROP COLUMN first_reply_id;
ALTER TABLE exchanges DROP COLUMN first_query_id;
