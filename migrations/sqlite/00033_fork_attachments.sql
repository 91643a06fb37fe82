-- +goose Up
-- A fork copies its prefix's attachments in one statement of its own
-- (models/forks.go) instead of this per-row trigger (00020), which ran a
-- lookup for each of the 10,000 rows a long fork copies: a fifth of the
-- fork's time (issue 31's fork_p50_ms). Only a fork inserts copies (an
-- import marks its copies by UPDATE, which the trigger never saw).
DROP TRIGGER messages_copy_attachments;

-- +goose Down
-- +goose StatementBegin
CREATE TRIGGER messages_copy_attachments AFTER INSERT ON messages WHEN new.copy_of IS NOT NULL BEGIN
    INSERT OR IGNORE INTO message_attachments (message_id, file_id, position)
    SELECT new.id, file_id, position FROM message_attachments WHERE message_id = new.copy_of;
END;
-- +goose StatementEnd
