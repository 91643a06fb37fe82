-- +goose Up
-- A chat's title names its project in the titles' index (issue 31's
-- search_p50_ms_project). A search scoped to a project named each of the
-- project's chats to both indexes (00032), and each name is a lookup in
-- every segment: the titles' index, written a row at a time as chats are
-- made and renamed, keeps the most segments (21 against the messages'
-- 14 in a full bench run), and a hundred names there cost as much as the
-- whole search of the messages. With the project's token ('p' and its id)
-- the title half of that search is one name.
--
-- Unlike the messages' index (00032: why no project token there), a
-- chat's move re-indexes one row, its title: the update trigger follows
-- project_id too (and the database's ON DELETE SET NULL of a deleted
-- project, which fires it). Under the index's secure-delete that costs
-- 2-6 ms a title for a person with 100,000 chats (the owner's token's
-- long list is rewritten); a move with secure-delete off would be 50 us,
-- but would leave the first entry in an older segment, where a later
-- secure delete of the title (renamed, or its chat deleted) no longer
-- reaches it: the deleted words would stay in the file.
DROP TRIGGER exchanges_fts_insert;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_update;
DROP TABLE exchanges_fts;
DROP VIEW exchanges_searchable;
CREATE VIEW exchanges_searchable AS
    SELECT id, title, 'c' || id || ' u' || user_id || COALESCE(' p' || project_id, '') AS scope FROM exchanges;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, scope, content = 'exchanges_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title, scope)
        VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id || COALESCE(' p' || new.project_id, ''));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope)
        VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id || COALESCE(' p' || old.project_id, ''));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title, user_id, project_id ON exchanges
WHEN old.title IS NOT new.title OR old.user_id IS NOT new.user_id OR old.project_id IS NOT new.project_id BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope)
        VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id || COALESCE(' p' || old.project_id, ''));
    INSERT INTO exchanges_fts (rowid, title, scope)
        VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id || COALESCE(' p' || new.project_id, ''));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER exchanges_fts_update;
DROP TRIGGER exchanges_fts_delete;
DROP TRIGGER exchanges_fts_insert;
DROP TABLE exchanges_fts;
DROP VIEW exchanges_searchable;
CREATE VIEW exchanges_searchable AS
    SELECT id, title, 'c' || id || ' u' || user_id AS scope FROM exchanges;
CREATE VIRTUAL TABLE exchanges_fts USING fts5 (
    title, scope, content = 'exchanges_searchable', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3 4'
);
INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO exchanges_fts (exchanges_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_insert AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts (rowid, title, scope) VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_delete AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope) VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER exchanges_fts_update AFTER UPDATE OF title, user_id ON exchanges
WHEN old.title IS NOT new.title OR old.user_id IS NOT new.user_id BEGIN
    INSERT INTO exchanges_fts (exchanges_fts, rowid, title, scope) VALUES ('delete', old.id, old.title, 'c' || old.id || ' u' || old.user_id);
    INSERT INTO exchanges_fts (rowid, title, scope) VALUES (new.id, new.title, 'c' || new.id || ' u' || new.user_id);
END;
-- +goose StatementEnd
