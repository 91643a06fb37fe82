-- +goose Up
-- Page proposals as durable facts; see the SQLite migration of the same name.
ALTER TABLE messages ADD COLUMN edit_mode TEXT CHECK (edit_mode IN ('full_replacement', 'section_patch'));
CREATE INDEX messages_edit_mode ON messages (exchange_id) WHERE edit_mode IS NOT NULL;

CREATE TABLE proposal_rejections (
    message_id BIGINT PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE proposal_rejections;
DROP INDEX messages_edit_mode;
ALTER TABLE messages DROP COLUMN edit_mode;
