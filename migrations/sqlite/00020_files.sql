-- +goose Up
-- Attachments (issue 26). A blob is the bytes of one upload, stored once per
-- owner and content (UNIQUE user_id, sha256), in the database itself: the
-- blob, its file row and the message that attaches it commit like any other
-- row, a backup of the database holds them, secure_delete overwrites them,
-- and every process sharing a PostgreSQL database sees the same ones.
-- A file is one upload of a blob under a name; a message holds files through
-- message_attachments. References are released by triggers, whatever deletes
-- the rows (an exchange, an account by its cascade, retention, an import
-- undone): a file goes with the last message that held it, a blob with the
-- last file that names it. A fork's copied entries hold the same files as
-- their originals.
CREATE TABLE blobs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    sha256     TEXT     NOT NULL,
    size       INTEGER  NOT NULL,
    data       BLOB     NOT NULL,
    thumbnail  BLOB     NOT NULL DEFAULT x'',
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX blobs_owner_sum ON blobs (user_id, sha256);

CREATE TABLE files (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    uid          TEXT     NOT NULL UNIQUE,
    user_id      INTEGER  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    blob_id      INTEGER  NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
    name         TEXT     NOT NULL,
    content_type TEXT     NOT NULL,
    kind         TEXT     NOT NULL,
    size         INTEGER  NOT NULL,
    sha256       TEXT     NOT NULL,
    width        INTEGER,
    height       INTEGER,
    created_at   DATETIME NOT NULL
);
CREATE INDEX files_user ON files (user_id, id);
CREATE INDEX files_blob ON files (blob_id);

CREATE TABLE message_attachments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    file_id    INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL
);
CREATE UNIQUE INDEX message_attachments_message ON message_attachments (message_id, file_id);
CREATE INDEX message_attachments_file ON message_attachments (file_id);

-- +goose StatementBegin
CREATE TRIGGER message_attachments_release AFTER DELETE ON message_attachments BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER files_release AFTER DELETE ON files BEGIN
    DELETE FROM blobs WHERE id = old.blob_id
        AND NOT EXISTS (SELECT 1 FROM files WHERE blob_id = old.blob_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_copy_attachments AFTER INSERT ON messages WHEN new.copy_of IS NOT NULL BEGIN
    INSERT OR IGNORE INTO message_attachments (message_id, file_id, position)
    SELECT new.id, file_id, position FROM message_attachments WHERE message_id = new.copy_of;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS messages_copy_attachments;
DROP TRIGGER IF EXISTS files_release;
DROP TRIGGER IF EXISTS message_attachments_release;
DROP TABLE IF EXISTS message_attachments;
DROP TABLE IF EXISTS files;
DROP TABLE IF EXISTS blobs;
