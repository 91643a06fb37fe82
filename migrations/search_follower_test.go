package migrations_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// searchFollowerVersion is the migration that takes SQLite's message
// indexing off the writing transaction (a watermark and batches).
const searchFollowerVersion = 15

// TestSearchFollowerSQLite: up, the watermark covers what the old triggers
// indexed, and new messages wait above it without breaking the index; down,
// the messages that waited are indexed and the old triggers index again.
// FTS5's integrity-check (rank 1: against the index's content) after each
// step.
func TestSearchFollowerSQLite(t *testing.T) {
	ctx := context.Background()
	_, db, p := sqliteBefore(t, searchFollowerVersion)
	const find = "SELECT CAST(rowid AS TEXT) FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid"
	intact := func(step string) {
		t.Helper()
		if _, err := db.Exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
			t.Fatalf("%s: full-text index: %v", step, err)
		}
	}
	found := func(step, q string, want ...string) {
		t.Helper()
		if got := stringsOf(t, db, find, q); !slices.Equal(got, want) {
			t.Fatalf("%s: %s finds %v, want %v", step, q, got, want)
		}
	}
	found("before", "pelican*", "1001", "1002", "1006", "1011", "1012")

	if _, err := p.UpTo(ctx, searchFollowerVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	var w int64
	if err := db.QueryRow("SELECT indexed_through FROM messages_fts_state").Scan(&w); err != nil || w != 1012 {
		t.Fatalf("watermark %d (%v), want the last message 1012", w, err)
	}
	intact("up")
	found("up", "pelican*", "1001", "1002", "1006", "1011", "1012")
	// New messages wait above the watermark; the index stays whole.
	if _, err := db.Exec(`INSERT INTO messages (id, exchange_id, seq, role, content, agent_type, created_at) VALUES
		(1013, 1001, 2, 'user', 'and herons?', NULL, '2026-01-01 10:00:02+00:00'),
		(1014, 1001, 3, 'assistant', 'herons too', 'router', '2026-01-01 10:00:03+00:00')`); err != nil {
		t.Fatal(err)
	}
	found("waiting", "heron*")
	intact("waiting")
	// An indexed message deleted, a waiting one deleted: the index follows.
	if _, err := db.Exec("DELETE FROM messages WHERE id IN (1002, 1014)"); err != nil {
		t.Fatal(err)
	}
	intact("deletes")
	found("deletes", "pelican*", "1001", "1006", "1011", "1012")

	if _, err := p.DownTo(ctx, searchFollowerVersion-1); err != nil {
		t.Fatalf("down: %v", err)
	}
	intact("down")
	found("down", "heron*", "1013")
	if _, err := db.Exec(`INSERT INTO messages (id, exchange_id, seq, role, content, agent_type, created_at) VALUES
		(1015, 1001, 4, 'user', 'and storks?', NULL, '2026-01-01 10:00:04+00:00')`); err != nil {
		t.Fatal(err)
	}
	found("down, a new message", "stork*", "1015")
	intact("down, a new message")

	if _, err := p.UpTo(ctx, searchFollowerVersion); err != nil {
		t.Fatalf("up again: %v", err)
	}
	intact("up again")
	found("up again", "stork* OR heron*", "1013", "1015")
}

// stringsOf runs q and returns its one text column.
func stringsOf(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
