-- +goose Up
-- Usernames unique by their NFKC case fold, and the server's signing
-- secrets; see the SQLite migration of the same name for the why.
ALTER TABLE users ADD COLUMN username_key TEXT;
CREATE UNIQUE INDEX users_username_fold ON users (username_key);

CREATE TABLE server_secrets (
    name       TEXT        PRIMARY KEY,
    secret     BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE server_secrets;
DROP INDEX users_username_fold;
ALTER TABLE users DROP COLUMN username_key;
