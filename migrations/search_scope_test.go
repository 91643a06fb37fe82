package migrations_test

import (
	"context"
	"slices"
	"testing"
)

// searchScopeVersion gives SQLite's full-text indexes each row's chat and
// owner.
const searchScopeVersion = 32

// TestSearchScopeSQLite: up, the indexes are built again with each row's
// chat and owner, waiting messages still wait, and a chat's (or a
// person's) token finds its rows alone, also once they were waiting, and after a delete. Down, the
// indexes of 00030 come back whole, and up again. FTS5's integrity-check
// (rank 1: against each index's content) after each step.
func TestSearchScopeSQLite(t *testing.T) {
	ctx := context.Background()
	_, db, p := sqliteBefore(t, searchScopeVersion)
	intact := func(step string) {
		t.Helper()
		for _, index := range []string{"messages_fts", "messages_reasoning_fts", "exchanges_fts"} {
			if _, err := db.Exec("INSERT INTO " + index + " (" + index + ", rank) VALUES ('integrity-check', 1)"); err != nil {
				t.Fatalf("%s: full-text index %s: %v", step, index, err)
			}
		}
	}
	found := func(step, table, q string, want ...string) {
		t.Helper()
		find := "SELECT CAST(rowid AS TEXT) FROM " + table + " WHERE " + table + " MATCH ? ORDER BY rowid"
		if got := stringsOf(t, db, find, q); !slices.Equal(got, want) {
			t.Fatalf("%s: %s finds %v, want %v", step, q, got, want)
		}
	}
	// One message of Ann's pelican chat waits for its batch (above the
	// watermark).
	if _, err := db.Exec(`INSERT INTO messages (id, exchange_id, seq, role, content, agent_type, created_at) VALUES
		(1013, 1001, 2, 'user', 'and pelican chicks?', NULL, '2026-01-01 10:00:02+00:00')`); err != nil {
		t.Fatal(err)
	}
	found("before", "messages_fts", "pelican*", "1001", "1002", "1006", "1011", "1012")

	if _, err := p.UpTo(ctx, searchScopeVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	intact("up")
	found("up", "messages_fts", "content : (pelican*)", "1001", "1002", "1006", "1011", "1012")
	found("up", "messages_fts", "content : (pelican*) AND scope : (c1001 OR c1003)", "1001", "1002", "1006")
	found("up", "exchanges_fts", "title : (pelican*) AND scope : (c1005)", "1005")
	found("up", "messages_fts", "content : (pelican*) AND scope : u1001", "1001", "1002", "1006", "1011", "1012")
	found("up", "messages_fts", "content : (pelican*) AND scope : u1002")
	found("up", "exchanges_fts", "scope : u1002", "1004")
	// A search's words are looked for in content alone (models' ftsIn):
	// a person typing a chat's token does not find the chat by it.
	found("up", "messages_fts", "content : (c1001)")

	// The waiting message is indexed with its chat; a deleted one leaves.
	if _, err := db.Exec("UPDATE messages_fts_state SET indexed_through = 1013"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO messages_fts (rowid, content, scope) SELECT m.id, m.content, 'c' || m.exchange_id || ' u' || e.user_id FROM messages m JOIN exchanges e ON e.id = m.exchange_id WHERE m.id = 1013`); err != nil {
		t.Fatal(err)
	}
	intact("indexed")
	found("indexed", "messages_fts", "content : (pelican*) AND scope : c1001", "1001", "1002", "1013")
	if _, err := db.Exec("DELETE FROM messages WHERE id IN (1002, 1013)"); err != nil {
		t.Fatal(err)
	}
	intact("deletes")
	found("deletes", "messages_fts", "content : (pelican*) AND scope : c1001", "1001")

	if _, err := p.DownTo(ctx, searchScopeVersion-1); err != nil {
		t.Fatalf("down: %v", err)
	}
	intact("down")
	found("down", "messages_fts", "pelican*", "1001", "1006", "1011", "1012")
	found("down", "exchanges_fts", "pelican*", "1001", "1005")
	if _, err := p.UpTo(ctx, searchScopeVersion); err != nil {
		t.Fatalf("up again: %v", err)
	}
	intact("up again")
}
