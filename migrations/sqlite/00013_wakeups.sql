-- +goose Up
-- Several processes on one database (issue 13) is PostgreSQL's business:
-- its 00013 adds the notifications and the table of Stop requests. One
-- SQLite file has one server process, which tells its own subscribers in
-- memory; the table is made here too, empty and unused, so that both
-- dialects have the same tables (without the foreign key, which a later
-- rebuild of exchanges would have to carry).
CREATE TABLE turn_stop_requests (
  exchange_id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  requested_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- +goose Down
DROP TABLE turn_stop_requests;
