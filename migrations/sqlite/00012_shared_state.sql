-- +goose Up
-- PostgreSQL's 00012 adds the tables in which several server processes share
-- the sign-in throttle and the per-user slots. A SQLite database has one
-- server process, which counts them in its memory: nothing to add here.
SELECT 1;

-- +goose Down
SELECT 1;
