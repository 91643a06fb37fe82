-- +goose Up
-- Models (issue 29): see the SQLite migration of the same number.
ALTER TABLE users ADD COLUMN default_model_id BIGINT REFERENCES llm_models (id) ON DELETE SET NULL;
ALTER TABLE projects ADD COLUMN default_model_id BIGINT REFERENCES llm_models (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE projects DROP COLUMN default_model_id;
ALTER TABLE users DROP COLUMN default_model_id;
