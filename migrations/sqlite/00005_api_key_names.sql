-- +goose Up
-- API keys have a name, so that a person can tell them apart in a list and
-- revoke the right one. Keys made before names existed are called "key".
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT 'key';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN name;
