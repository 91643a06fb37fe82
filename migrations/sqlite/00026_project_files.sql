-- +goose Up
-- A project's files (issue 27): attachments used as the project's
-- knowledge. A file a project holds is referenced like one a message
-- holds: the last message that held it no longer takes it with it, and
-- unlinking it from its last project (or deleting the project) releases it
-- the same way a message's last reference does.
CREATE TABLE project_files (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER  NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    file_id    INTEGER  NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX project_files_project ON project_files (project_id, file_id);
CREATE INDEX project_files_file ON project_files (file_id);

DROP TRIGGER message_attachments_release;
-- +goose StatementBegin
CREATE TRIGGER message_attachments_release AFTER DELETE ON message_attachments BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM project_files WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM file_holds WHERE file_id = old.file_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER project_files_release AFTER DELETE ON project_files BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM project_files WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM file_holds WHERE file_id = old.file_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS project_files_release;
DROP TRIGGER message_attachments_release;
-- +goose StatementBegin
CREATE TRIGGER message_attachments_release AFTER DELETE ON message_attachments BEGIN
    DELETE FROM files WHERE id = old.file_id
        AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE file_id = old.file_id)
        AND NOT EXISTS (SELECT 1 FROM file_holds WHERE file_id = old.file_id);
END;
-- +goose StatementEnd
DROP TABLE IF EXISTS project_files;
