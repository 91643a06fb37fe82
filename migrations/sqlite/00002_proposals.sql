-- +goose Up
-- Page proposals as durable facts. An assistant message that proposes an edit
-- names its kind in edit_mode (NULL for prose), so proposals can be counted
-- without parsing agent_response. A rejection is kept here as well as in the
-- person's session, for the administrators' acceptance figures; an accept is
-- the page revision that names the message.
ALTER TABLE messages ADD COLUMN edit_mode TEXT CHECK (edit_mode IN ('full_replacement', 'section_patch'));
CREATE INDEX messages_edit_mode ON messages (exchange_id) WHERE edit_mode IS NOT NULL;

CREATE TABLE proposal_rejections (
    message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE proposal_rejections;
DROP INDEX messages_edit_mode;
ALTER TABLE messages DROP COLUMN edit_mode;
