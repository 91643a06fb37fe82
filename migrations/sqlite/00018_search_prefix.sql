-- +goose Up
-- Prefix searches bounded (issue 22, finding 13). FTS5 answers "pel*" by
-- expanding the prefix into every term of the index that starts with it and
-- merging their lists, before any row is filtered by its owner: another
-- user's 100,000 distinct "pel…" words made one user's prefix search take a
-- second. With prefix indexes of 2, 3 and 4 characters, such a prefix is one
-- term of the index, read as one list whatever the vocabulary holds
-- (longer prefixes still expand, over the terms that share all of them).
-- The tables are made again with the option and filled from their content;
-- the triggers name them, and stay as they are.
DROP TABLE IF EXISTS messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

DROP TABLE IF EXISTS exchanges_fts;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, content = 'exchanges', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');

-- +goose Down
DROP TABLE IF EXISTS exchanges_fts;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, content = 'exchanges', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');

DROP TABLE IF EXISTS messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
