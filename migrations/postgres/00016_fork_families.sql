-- +goose Up
-- SQLite's 00016 finds a fork's copies through the family they belong to
-- (fork_families) rather than through an index of copy_of alone, whose
-- inserts there rewrote the family's whole part of the index at every
-- fork. PostgreSQL keeps 00008's index and its statement-level promotion,
-- which joins the deleted rows to their copies in one pass: nothing to add.
SELECT 1;

-- +goose Down
SELECT 1;
