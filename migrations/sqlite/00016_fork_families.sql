-- +goose Up
-- Copies are found through their family, not through an index of copy_of
-- alone (issue 11's fork_p50_ms). messages_copy_of (00008) keyed every
-- copy by the original it names, so a fork's 10,000 copies went into that
-- index next to the copies every earlier fork of the family had made: each
-- fork rewrote the whole family's part of the index, and a fork cost more
-- the more branches its family had. Keyed by the exchange first, a fork's
-- entries are one run at the index's end, whatever the family's size.
--
-- Who looks copies up: deleting an original promotes its oldest copy (the
-- trigger below), and a page's proposals share their state with their
-- copies (models/proposals.go, which names the page's exchanges). Copies of
-- an entry live only in the exchanges of its family, so the trigger needs
-- the family's members: fork_families names, for every fork, the family it
-- was made in (its parent's family; a root's family is its own id). It has
-- no foreign key on purpose: an exchange's messages are deleted by the
-- cascade after the exchange's row is gone, and the trigger still has to
-- find that exchange's family then. A family id is a key, never read as an
-- exchange: a row outliving its exchange (or an id SQLite reuses after the
-- newest exchange is deleted) only adds a member with nothing to find.
CREATE TABLE fork_families (
    exchange_id INTEGER PRIMARY KEY,
    family_id   INTEGER NOT NULL
);
CREATE INDEX fork_families_family ON fork_families (family_id);

-- Families of the forks made before: the exchanges linked by a copy (a
-- copy's exchange and its original's) or by forked_from, closed over, each
-- keyed by the smallest id among them (a promotion may have left copies
-- pointing across what forked_from still links).
WITH RECURSIVE edge(a, b) AS (
    SELECT DISTINCT m.exchange_id, o.exchange_id FROM messages m JOIN messages o ON o.id = m.copy_of
    WHERE m.copy_of IS NOT NULL
    UNION
    SELECT id, forked_from_id FROM exchanges WHERE forked_from_id IS NOT NULL
), link(a, b) AS (
    SELECT a, b FROM edge UNION SELECT b, a FROM edge
), reach(x, y) AS (
    SELECT a, a FROM link
    UNION
    SELECT reach.x, link.b FROM reach JOIN link ON link.a = reach.y
)
INSERT INTO fork_families (exchange_id, family_id) SELECT x, MIN(y) FROM reach GROUP BY x;

CREATE INDEX messages_copies ON messages (exchange_id, copy_of) WHERE copy_of IS NOT NULL;
DROP INDEX messages_copy_of;

-- 00008's promotion, its lookups of copy_of made within the family.
DROP TRIGGER messages_copies_promote;
-- +goose StatementBegin
CREATE TRIGGER messages_copies_promote AFTER DELETE ON messages
WHEN old.copy_of IS NULL BEGIN
    UPDATE messages SET copy_of = (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)))
    WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id))
    AND id > (
        SELECT MIN(id) FROM messages WHERE copy_of = old.id AND exchange_id IN (
            SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
                (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id)));
    UPDATE messages SET copy_of = NULL WHERE copy_of = old.id AND exchange_id IN (
        SELECT exchange_id FROM fork_families WHERE family_id = COALESCE(
            (SELECT family_id FROM fork_families WHERE exchange_id = old.exchange_id), old.exchange_id));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_copies_promote;
-- +goose StatementBegin
CREATE TRIGGER messages_copies_promote AFTER DELETE ON messages
WHEN old.copy_of IS NULL BEGIN
    UPDATE messages SET copy_of = (SELECT MIN(id) FROM messages WHERE copy_of = old.id)
    WHERE copy_of = old.id AND id > (SELECT MIN(id) FROM messages WHERE copy_of = old.id);
    UPDATE messages SET copy_of = NULL WHERE copy_of = old.id;
END;
-- +goose StatementEnd
CREATE INDEX messages_copy_of ON messages (copy_of) WHERE copy_of IS NOT NULL;
DROP INDEX messages_copies;
DROP TABLE fork_families;
