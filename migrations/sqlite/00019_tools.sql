-- +goose Up
-- Turns that wait (issue 25). A turn whose tool calls wait for a person or
-- the browser is "paused": its lease is released (turn_status idle, no
-- owner) and turn_waiting says the log ends with calls to answer. A flag
-- rather than a fourth turn_status: the status's CHECK would mean
-- rebuilding the exchanges table, its triggers and its indexes on SQLite.
ALTER TABLE exchanges ADD COLUMN turn_waiting BOOLEAN NOT NULL DEFAULT 0;

-- Each person's choice per tool: run without asking, ask first, never.
-- A tool without a row follows its registered default.
CREATE TABLE tool_policies (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tool       TEXT    NOT NULL,
    policy     TEXT    NOT NULL CHECK (policy IN ('auto', 'confirm', 'never')),
    updated_at DATETIME NOT NULL,
    UNIQUE (user_id, tool)
);

-- +goose Down
DROP TABLE tool_policies;
ALTER TABLE exchanges DROP COLUMN turn_waiting;
