-- +goose Up
-- Search scoped by the index (issue 31) is SQLite's: its full-text
-- indexes are FTS5 tables apart from the rows, and learn each row's chat
-- in a column of their own (sqlite/00032). PostgreSQL's index is a column
-- of the message's own row, filtered by the join as before; this file
-- keeps the two dialects at the same version.
SELECT 1;

-- +goose Down
SELECT 1;
