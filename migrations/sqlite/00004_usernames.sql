-- +goose Up
-- Usernames are unique by their NFKC case fold ("Ada", "ADA" and "ａｄａ" are
-- one name), kept in username_key: SQL cannot fold Unicode case, so the store
-- fills the key of existing accounts in Go right after migrating
-- (models.Store.Migrate). Two existing names that fold to one key are both
-- kept: the older account gets the key, the later ones keep a NULL key (a
-- unique index allows several NULLs), still sign in by their exact name, and
-- are listed in a warning at start-up (models.Store.UsernameClashes).
ALTER TABLE users ADD COLUMN username_key TEXT;
CREATE UNIQUE INDEX users_username_fold ON users (username_key);

-- Secrets the server signs with (the CSRF tokens of visitors who have no
-- session), made once and shared by every process on this database.
CREATE TABLE server_secrets (
    name       TEXT     PRIMARY KEY,
    secret     BLOB     NOT NULL,
    created_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE server_secrets;
DROP INDEX users_username_fold;
ALTER TABLE users DROP COLUMN username_key;
