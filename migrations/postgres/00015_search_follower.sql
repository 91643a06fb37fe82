-- +goose Up
-- SQLite's 00015 moves its full-text indexing of messages off the turn's
-- commit (a watermark, and batches indexed a little later or by the next
-- search). PostgreSQL keeps its own as it is: the tsvector is a generated
-- column of the message (00007), with a GIN index (which by default takes
-- new entries into its pending list). Nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
