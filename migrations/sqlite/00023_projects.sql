-- +goose Up
-- Projects, instructions and memory (issue 27).
--
-- A project groups a person's chats and carries instructions. Projects nest
-- one level at most (the store checks; a CHECK cannot see the parent's
-- parent). Names are unique per person and parent: the top level's parent
-- is NULL, and NULLs are distinct in a UNIQUE index, hence COALESCE.
CREATE TABLE projects (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    uid          TEXT    NOT NULL,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    parent_id    INTEGER REFERENCES projects (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    instructions TEXT    NOT NULL DEFAULT '',
    memory       BOOLEAN NOT NULL DEFAULT 1,
    agent_type   TEXT    NOT NULL DEFAULT '',
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL
);
CREATE UNIQUE INDEX projects_name ON projects (user_id, COALESCE(parent_id, 0), name);
CREATE UNIQUE INDEX projects_uid ON projects (user_id, uid);
CREATE INDEX projects_parent ON projects (parent_id) WHERE parent_id IS NOT NULL;

-- A chat belongs to at most one project; a deleted project lets its chats
-- go (the store moves or deletes them first, as the person chose).
-- temporary: kept out of history, search and memory, and deleted 24 hours
-- after its last activity (updated_at).
ALTER TABLE exchanges ADD COLUMN project_id INTEGER REFERENCES projects (id) ON DELETE SET NULL;
ALTER TABLE exchanges ADD COLUMN temporary BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX exchanges_project ON exchanges (project_id, updated_at DESC, id DESC) WHERE project_id IS NOT NULL;
CREATE INDEX exchanges_temporary ON exchanges (updated_at) WHERE temporary;

-- The person's own instructions ("About me / How to answer") and the
-- account-wide memory switch.
CREATE TABLE account_instructions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    about      TEXT    NOT NULL DEFAULT '',
    style      TEXT    NOT NULL DEFAULT '',
    memory     BOOLEAN NOT NULL DEFAULT 1,
    updated_at DATETIME NOT NULL
);

-- Memory entries: short facts put in every turn's context. source is
-- 'manual' (typed on the account page or through the API) or 'exchange'
-- (the remember tool, approved in that chat: exchange_id).
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    uid         TEXT    NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    content     TEXT    NOT NULL,
    source      TEXT    NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'exchange')),
    exchange_id INTEGER REFERENCES exchanges (id) ON DELETE SET NULL,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX memories_user ON memories (user_id, id);
CREATE UNIQUE INDEX memories_uid ON memories (user_id, uid);

-- The composed system text each reply was given (account instructions,
-- project instructions, memory), once per person and text: a reply's
-- agent_response.metadata.instructions names it by its SHA-256, and its
-- owner can read what the agent was told after the sources changed.
CREATE TABLE instruction_texts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    hash       TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    UNIQUE (user_id, hash)
);

-- +goose Down
DROP TABLE instruction_texts;
DROP TABLE memories;
DROP TABLE account_instructions;
DROP INDEX exchanges_temporary;
DROP INDEX exchanges_project;
ALTER TABLE exchanges DROP COLUMN temporary;
ALTER TABLE exchanges DROP COLUMN project_id;
DROP TABLE projects;
