-- +goose Up
-- Search (issue 10): a text search configuration that folds accents
-- (unaccent) before English stemming, used by generated tsvector columns
-- over what a person can look for (user messages, replies, tool results;
-- not error rows or tool calls) and over exchange titles, each with a GIN
-- index. Generated columns follow their row in the same transaction.
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION palaver (COPY = english);
ALTER TEXT SEARCH CONFIGURATION palaver
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;

DROP INDEX messages_content_tsv;
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN role IN ('user', 'assistant', 'tool_result') THEN to_tsvector('palaver'::regconfig, content) END
) STORED;
CREATE INDEX messages_content_tsv ON messages USING GIN (content_tsv);

ALTER TABLE exchanges ADD COLUMN title_tsv TSVECTOR GENERATED ALWAYS AS (
    to_tsvector('palaver'::regconfig, title)
) STORED;
CREATE INDEX exchanges_title_tsv ON exchanges USING GIN (title_tsv);

-- +goose Down
DROP INDEX exchanges_title_tsv;
ALTER TABLE exchanges DROP COLUMN title_tsv;
DROP INDEX messages_content_tsv;
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED;
CREATE INDEX messages_content_tsv ON messages USING GIN (content_tsv);
DROP TEXT SEARCH CONFIGURATION palaver;
