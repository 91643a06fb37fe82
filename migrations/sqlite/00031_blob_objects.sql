-- +goose Up
-- Blobs kept in an S3-compatible store (--blob-store s3://…). The row stays
-- here (owner, sum, size: references, quota, dedupe and the release
-- triggers work as before); its bytes are the objects object_key and
-- thumbnail_key name, and data / thumbnail stay empty. A row without
-- object_key keeps its bytes in the database, as every blob did before.
--
-- An object is put before its row commits (a crash between them leaves an
-- object no row names, which the sweep deletes once it is older than any
-- upload can take); it is deleted only after its row's deletion commits:
-- whatever deletes the row (a file, an exchange, an account by cascade,
-- retention, an import undone), this trigger queues its keys in
-- blob_deletions in the same transaction, and the store drains the queue.
-- So no row ever names an object that is gone. A key is never reused (it
-- carries a fresh suffix per row), so a queued deletion cannot take the
-- object of a newer upload of the same bytes.
ALTER TABLE blobs ADD COLUMN object_key TEXT;
ALTER TABLE blobs ADD COLUMN thumbnail_key TEXT;
CREATE UNIQUE INDEX blobs_object_key ON blobs (object_key) WHERE object_key IS NOT NULL;
CREATE UNIQUE INDEX blobs_thumbnail_key ON blobs (thumbnail_key) WHERE thumbnail_key IS NOT NULL;

CREATE TABLE blob_deletions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    object_key TEXT     NOT NULL,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose StatementBegin
CREATE TRIGGER blobs_objects_release AFTER DELETE ON blobs WHEN old.object_key IS NOT NULL BEGIN
    INSERT INTO blob_deletions (object_key) VALUES (old.object_key);
    INSERT INTO blob_deletions (object_key) SELECT old.thumbnail_key WHERE old.thumbnail_key IS NOT NULL;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS blobs_objects_release;
DROP TABLE IF EXISTS blob_deletions;
DROP INDEX IF EXISTS blobs_thumbnail_key;
DROP INDEX IF EXISTS blobs_object_key;
ALTER TABLE blobs DROP COLUMN thumbnail_key;
ALTER TABLE blobs DROP COLUMN object_key;
