-- +goose Up
-- A job id is an opaque string (Galaxy sends encoded ids such as
-- "f2db41e1fa331b3e"), so exchanges.job_id becomes TEXT; existing ids keep
-- their value as decimal text. The scope check and the unique index on
-- (user_id, job_id) are rebuilt with the column.
ALTER TABLE exchanges ALTER COLUMN job_id TYPE TEXT USING job_id::text;

-- +goose Down
-- Refused (and nothing changed) while a job id is not a decimal integer.
ALTER TABLE exchanges ALTER COLUMN job_id TYPE BIGINT USING job_id::bigint;
