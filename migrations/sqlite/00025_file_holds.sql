-- +goose Up
-- A hold keeps a file while the last message that held it goes: an import
-- that is undone deletes the conversations it stored, and a file the
-- account had before the import (one not yet attached, which the import's
-- messages attached) must stay, as it was. Holds live inside the undoing
-- transaction only; a file's deletion takes its hold with it.
CREATE TABLE file_holds (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id INTEGER NOT NULL UNIQUE REFERENCES files (id) ON DELETE CASCADE
);

DROP TRIGGER message_attachments_release;
-- +goose StatementBegin
CREATE TRIGGER message_attachments_release AFTER DELETE ON message_attachments BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM file_holds WHERE file_id = old.file_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER message_attachments_release;
-- +goose StatementBegin
CREATE TRIGGER message_attachments_release AFTER DELETE ON message_attachments BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id);
END;
-- +goose StatementEnd
DROP TABLE IF EXISTS file_holds;
