-- +goose Up
-- A turn's running time so far: see the SQLite migration of the same number.
ALTER TABLE exchanges ADD COLUMN turn_active_ms BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE exchanges DROP COLUMN turn_active_ms;
