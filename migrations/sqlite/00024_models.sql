-- +goose Up
-- Models (issue 29): the administrators' connections to model servers,
-- their models, each person's usage per day and model, and token budgets.

-- A connection's API key is stored encrypted (AES-GCM, a key outside the
-- database: --secret-key or a file beside the database), never in clear.
-- source 'flags' is the connection the --llm-* flags define: read-only.
CREATE TABLE llm_connections (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL CHECK (kind IN ('openai', 'anthropic', 'builtin')),
    base_url    TEXT    NOT NULL DEFAULT '',
    api_key_enc TEXT    NOT NULL DEFAULT '',
    source      TEXT    NOT NULL DEFAULT 'admin' CHECK (source IN ('admin', 'flags')),
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);

-- Prices are per million tokens; NULL: unknown (cost 0).
CREATE TABLE llm_models (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    connection_id INTEGER NOT NULL REFERENCES llm_connections (id) ON DELETE CASCADE,
    model         TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    enabled       BOOLEAN NOT NULL DEFAULT 0,
    input_price   REAL,
    output_price  REAL,
    is_default    BOOLEAN NOT NULL DEFAULT 0,
    updated_at    DATETIME NOT NULL,
    UNIQUE (connection_id, model)
);

-- One row per person, day (UTC, YYYY-MM-DD) and model, kept by the
-- transaction that commits the reply; cost uses the price at that time.
CREATE TABLE usage_daily (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day           TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    cost          REAL    NOT NULL DEFAULT 0,
    replies       INTEGER NOT NULL DEFAULT 0,
    UNIQUE (user_id, day, model)
);

-- Token budgets: subject 'default' (every person), 'user:ID' (an
-- administrator's override) or 'self:ID' (a person's own lower cap).
-- 0: no limit.
CREATE TABLE token_budgets (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    subject        TEXT    NOT NULL UNIQUE,
    user_id        INTEGER REFERENCES users (id) ON DELETE CASCADE,
    daily_tokens   INTEGER NOT NULL DEFAULT 0,
    monthly_tokens INTEGER NOT NULL DEFAULT 0,
    updated_at     DATETIME NOT NULL
);


-- +goose Down
DROP TABLE token_budgets;
DROP TABLE usage_daily;
DROP TABLE llm_models;
DROP TABLE llm_connections;
