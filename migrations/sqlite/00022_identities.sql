-- +goose Up
-- Single sign-on (issue 30). An identity at an OpenID provider is its
-- (issuer, subject), never its email: the pair is unique, so one identity
-- signs in to one account. provider is the operator's name for it (the
-- "NAME" of --oidc NAME=…), kept to show it and to tell which flag it came
-- from; email is what the provider said last, shown on the account page.
-- An account made by a first sign-in has no password: its password_hash is
-- '' (no password checks against it), and its identities are then its only
-- way in, which is why the last one cannot be unlinked.
CREATE TABLE user_identities (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider     TEXT     NOT NULL,
    issuer       TEXT     NOT NULL,
    subject      TEXT     NOT NULL,
    email        TEXT     NOT NULL DEFAULT '',
    email_verified BOOLEAN NOT NULL DEFAULT 0,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    UNIQUE (issuer, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

-- +goose Down
DROP TABLE user_identities;
