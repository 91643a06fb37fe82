-- +goose Up
-- Forks (issue 11); see the SQLite migration of the same name for the why.
-- A fork's copied prefix rows name in copy_of the original row they copy.
-- Search indexes originals only, stored_bytes adds a copied prefix once (in
-- the store), and deleting an original promotes its oldest copy.
ALTER TABLE messages ADD COLUMN copy_of BIGINT;
CREATE INDEX messages_copy_of ON messages (copy_of) WHERE copy_of IS NOT NULL;
-- The dashboard counts what was written, originals only (a copy was
-- written once, where it came from): its index leaves copies out, which
-- also spares a fork one index insert per copied row.
DROP INDEX messages_created;
CREATE INDEX messages_created ON messages (created_at) WHERE copy_of IS NULL;

-- content_tsv as 00007 defines it, NULL for copies. A promoted copy
-- (copy_of set to NULL) is indexed by the same generated column.
DROP INDEX messages_content_tsv;
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN copy_of IS NULL AND role IN ('user', 'assistant', 'tool_result')
        THEN to_tsvector('palaver'::regconfig, content) END
) STORED;
CREATE INDEX messages_content_tsv ON messages USING GIN (content_tsv);

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

-- Promotion runs once per DELETE statement (a cascade from an exchange, a
-- page or an account runs one per parent row), over the rows it deleted.
-- The advisory lock orders it with forks, which hold it shared while they
-- copy (models.Store.fork): under READ COMMITTED a fork that copied a row
-- just before its original's delete committed would otherwise keep a
-- copy_of naming a row that is gone, and its entry would drop out of
-- search. The number is the store's forkLock.
-- +goose StatementBegin
CREATE FUNCTION messages_promote_copies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM gone WHERE copy_of IS NULL) THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(7265111);
    WITH heirs AS (
        SELECT c.copy_of AS original, MIN(c.id) AS heir
        FROM messages c JOIN gone g ON c.copy_of = g.id
        WHERE g.copy_of IS NULL
        GROUP BY c.copy_of
    )
    UPDATE messages m SET copy_of = CASE WHEN m.id = h.heir THEN NULL ELSE h.heir END
    FROM heirs h WHERE m.copy_of = h.original;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER messages_promote_copies AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION messages_promote_copies();

-- +goose Down
DROP TRIGGER messages_promote_copies ON messages;
DROP FUNCTION messages_promote_copies();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION messages_stored_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE exchanges SET stored_bytes = stored_bytes - octet_length(OLD.content)
            - COALESCE(octet_length(OLD.agent_response), 0) - COALESCE(octet_length(OLD.tool), 0)
        WHERE id = OLD.exchange_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE exchanges SET stored_bytes = stored_bytes + octet_length(NEW.content)
            + COALESCE(octet_length(NEW.agent_response), 0) + COALESCE(octet_length(NEW.tool), 0)
        WHERE id = NEW.exchange_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP INDEX messages_content_tsv;
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN role IN ('user', 'assistant', 'tool_result') THEN to_tsvector('palaver'::regconfig, content) END
) STORED;
CREATE INDEX messages_content_tsv ON messages USING GIN (content_tsv);
DROP INDEX messages_created;
CREATE INDEX messages_created ON messages (created_at);
DROP INDEX messages_copy_of;
ALTER TABLE messages DROP COLUMN copy_of;
