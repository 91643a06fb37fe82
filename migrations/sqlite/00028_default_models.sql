-- +goose Up
-- Models (issue 29): the model a person picks by default (account page),
-- and the one a project's chats start with (it wins inside the project).
-- A model deleted with its connection leaves no default behind.
ALTER TABLE users ADD COLUMN default_model_id INTEGER REFERENCES llm_models (id) ON DELETE SET NULL;
ALTER TABLE projects ADD COLUMN default_model_id INTEGER REFERENCES llm_models (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE projects DROP COLUMN default_model_id;
ALTER TABLE users DROP COLUMN default_model_id;
