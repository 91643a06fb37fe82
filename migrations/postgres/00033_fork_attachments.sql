-- +goose Up
-- A fork copies its prefix's attachments in one statement of its own
-- (models/forks.go) instead of this per-row trigger (00020): see
-- sqlite/00033. Only a fork inserts copies.
DROP TRIGGER messages_copy_attachments ON messages;
DROP FUNCTION messages_copy_attachments();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION messages_copy_attachments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_attachments (message_id, file_id, position)
    SELECT NEW.id, file_id, position FROM message_attachments WHERE message_id = NEW.copy_of
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER messages_copy_attachments AFTER INSERT ON messages
    FOR EACH ROW WHEN (NEW.copy_of IS NOT NULL) EXECUTE FUNCTION messages_copy_attachments();
