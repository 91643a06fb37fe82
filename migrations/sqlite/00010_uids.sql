-- +goose Up
-- Stable identities (issue 12): every exchange, message, page and revision
-- carries a uid, a UUID given when the row is made (the store's BeforeCreate
-- hooks, time-ordered v7) and never changed; exports carry it and imports
-- match on it. Rows made before this migration get a random (v4) one here.
-- A fork's copied entries get their own, in the fork's INSERT … SELECT.
-- The column is NOT NULL with '' as its default only because SQLite cannot
-- add a NOT NULL column without one: the store never leaves it empty (a
-- test checks every way it makes rows), and the uniqueness covers every
-- uid that is set. A uid is unique within its owner (a user's exchanges and
-- pages, an exchange's messages, a page's revisions): an export imported
-- into another account keeps its uids, and importing it again there finds
-- them and skips them.
ALTER TABLE exchanges ADD COLUMN uid TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN uid TEXT NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN uid TEXT NOT NULL DEFAULT '';
ALTER TABLE page_revisions ADD COLUMN uid TEXT NOT NULL DEFAULT '';

UPDATE exchanges SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
UPDATE messages SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
UPDATE pages SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
UPDATE page_revisions SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));

CREATE UNIQUE INDEX exchanges_uid ON exchanges (user_id, uid) WHERE uid <> '';
CREATE UNIQUE INDEX messages_uid ON messages (exchange_id, uid) WHERE uid <> '';
CREATE UNIQUE INDEX pages_uid ON pages (user_id, uid) WHERE uid <> '';
CREATE UNIQUE INDEX page_revisions_uid ON page_revisions (page_id, uid) WHERE uid <> '';

-- +goose Down
DROP INDEX page_revisions_uid;
DROP INDEX pages_uid;
DROP INDEX messages_uid;
DROP INDEX exchanges_uid;
ALTER TABLE page_revisions DROP COLUMN uid;
ALTER TABLE pages DROP COLUMN uid;
ALTER TABLE messages DROP COLUMN uid;
ALTER TABLE exchanges DROP COLUMN uid;
