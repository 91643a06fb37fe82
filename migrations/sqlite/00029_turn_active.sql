-- +goose Up
-- A turn's running time so far, in milliseconds, kept while it waits
-- (issue 25): the turn timeout counts the whole turn's running time and
-- not the waits for the person, so a resumed stretch gets what is left.
ALTER TABLE exchanges ADD COLUMN turn_active_ms BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE exchanges DROP COLUMN turn_active_ms;
