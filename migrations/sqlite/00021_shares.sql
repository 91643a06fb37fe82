-- +goose Up
-- Share links and unread marks (issue 28).
--
-- A share is a snapshot of one exchange's log as of a seq: the rows are the
-- log's own (it is append-only), so the share keeps only the seq, and the
-- title as it stood then. The token is the link itself, at least 128
-- random bits; it is kept (not only its hash) so that the owner can copy
-- the link again from the account page. Deleting the exchange or the
-- account deletes its shares: their links answer 404 like unknown ones.
-- views counts the opens; nothing about the visitor is stored.
CREATE TABLE shares (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    exchange_id INTEGER NOT NULL REFERENCES exchanges (id) ON DELETE CASCADE,
    token       TEXT    NOT NULL UNIQUE,
    title       TEXT    NOT NULL,
    at_seq      INTEGER NOT NULL,
    visibility  TEXT    NOT NULL CHECK (visibility IN ('link', 'users')),
    show_owner  BOOLEAN NOT NULL DEFAULT 0,
    expires_at  DATETIME,
    revoked_at  DATETIME,
    revoked_by  TEXT,
    views       INTEGER NOT NULL DEFAULT 0,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX shares_user ON shares (user_id, id);
CREATE INDEX shares_exchange ON shares (exchange_id);

-- A conversation continued from a share link: a copy in the viewer's own
-- account, marked so, with nothing that names the owner or their rows.
CREATE TABLE shared_copies (
    exchange_id INTEGER PRIMARY KEY AUTOINCREMENT REFERENCES exchanges (id) ON DELETE CASCADE,
    created_at  DATETIME NOT NULL
);

-- The last seq of an exchange its owner has seen. No row: read (the
-- conversations from before this migration, and those always watched).
-- Unread is seen_seq below the log's last seq once no turn runs.
CREATE TABLE exchange_reads (
    exchange_id INTEGER PRIMARY KEY AUTOINCREMENT REFERENCES exchanges (id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seen_seq    INTEGER NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX exchange_reads_user ON exchange_reads (user_id);

-- +goose Down
DROP TABLE exchange_reads;
DROP TABLE shared_copies;
DROP TABLE shares;
