-- +goose Up
-- A chat's title names its project in SQLite's titles' index
-- (sqlite/00034). PostgreSQL's index is a column of the chat's own row,
-- filtered by the join; this file keeps the two dialects at the same
-- version.
SELECT 1;

-- +goose Down
SELECT 1;
