package migrations_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// titleProjectVersion gives SQLite's titles' index each chat's project.
const titleProjectVersion = 34

// TestTitleProjectSQLite: up, a title in a project is found by the
// project's token and no other; a chat moved in, out or left by a deleted
// project is found where it is. Down, 00032's titles' index comes back
// whole, and up again. FTS5's integrity-check (rank 1: against the
// index's content) after each step.
func TestTitleProjectSQLite(t *testing.T) {
	ctx := context.Background()
	_, db, p := sqliteBefore(t, titleProjectVersion)
	intact := func(step string) {
		t.Helper()
		if _, err := db.Exec("INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
			t.Fatalf("%s: the titles' index: %v", step, err)
		}
	}
	found := func(step, q string, want ...string) {
		t.Helper()
		find := "SELECT CAST(rowid AS TEXT) FROM exchanges_fts WHERE exchanges_fts MATCH ? ORDER BY rowid"
		if got := stringsOf(t, db, find, q); !slices.Equal(got, want) {
			t.Fatalf("%s: %s finds %v, want %v", step, q, got, want)
		}
	}
	// Ann's two projects; her pelican chat is in the first already.
	if _, err := db.Exec(`INSERT INTO projects (id, uid, user_id, name, created_at, updated_at) VALUES
		(7, 'p-7', 1001, 'Birds', '2026-01-01 10:00:00+00:00', '2026-01-01 10:00:00+00:00'),
		(8, 'p-8', 1001, 'Seas', '2026-01-01 10:00:00+00:00', '2026-01-01 10:00:00+00:00')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE exchanges SET project_id = 7 WHERE id = 1001"); err != nil {
		t.Fatal(err)
	}

	if _, err := p.UpTo(ctx, titleProjectVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	intact("up")
	found("up", "title : (pelican*) AND scope : p7", "1001")
	found("up", "title : (pelican*) AND scope : p8")
	found("up", "title : (pelican*) AND scope : u1001", "1001", "1005")
	// Moves: in, across, out, and a project deleted under its chat.
	for _, move := range []struct{ step, sql, p7, p8 string }{
		{"moved in", "UPDATE exchanges SET project_id = 8 WHERE id = 1005", "1001", "1005"},
		{"moved across", "UPDATE exchanges SET project_id = 8 WHERE id = 1001", "", "1001 1005"},
		{"moved out", "UPDATE exchanges SET project_id = NULL WHERE id = 1005", "", "1001"},
		{"project deleted", "DELETE FROM projects WHERE id = 8", "", ""},
	} {
		if _, err := db.Exec(move.sql); err != nil {
			t.Fatal(err)
		}
		intact(move.step)
		found(move.step, "title : (pelican*) AND scope : p7", strings.Fields(move.p7)...)
		found(move.step, "title : (pelican*) AND scope : p8", strings.Fields(move.p8)...)
	}
	// A new chat in a project is indexed with it; a deleted one leaves.
	if _, err := db.Exec(`INSERT INTO exchanges (id, uid, user_id, scope, title, agent_type, project_id, created_at, updated_at)
		VALUES (1009, 'x-1009', 1001, 'general', 'pelican news', 'router', 7, '2026-01-02 10:00:00+00:00', '2026-01-02 10:00:00+00:00')`); err != nil {
		t.Fatal(err)
	}
	intact("made")
	found("made", "title : (pelican*) AND scope : p7", "1009")
	// Moved, renamed, then deleted: a word of its first title is in none of
	// the index's pages (secure-delete, which a move must not lose).
	for _, step := range []string{
		"UPDATE exchanges SET title = 'qwertyx pelican news' WHERE id = 1009",
		"UPDATE exchanges SET project_id = NULL WHERE id = 1009",
		"UPDATE exchanges SET title = 'gull news' WHERE id = 1009",
		"DELETE FROM exchanges WHERE id = 1009",
	} {
		if _, err := db.Exec(step); err != nil {
			t.Fatal(err)
		}
		intact(step)
	}
	found("deleted", "title : (pelican* OR qwertyx OR gull) AND scope : u1001", "1001", "1005")
	if left := stringsOf(t, db, "SELECT CAST(id AS TEXT) FROM exchanges_fts_data WHERE instr(block, 'qwertyx') > 0"); len(left) != 0 {
		t.Fatalf("the deleted title's word is still in the index's pages %v", left)
	}

	if _, err := db.Exec("UPDATE exchanges SET project_id = 7 WHERE id = 1005"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, titleProjectVersion-1); err != nil {
		t.Fatalf("down: %v", err)
	}
	intact("down")
	found("down", "title : (pelican*) AND scope : u1001", "1001", "1005")
	found("down", "title : (pelican*) AND scope : p7")
	if _, err := p.UpTo(ctx, titleProjectVersion); err != nil {
		t.Fatalf("up again: %v", err)
	}
	intact("up again")
	found("up again", "title : (pelican*) AND scope : p7", "1005")
}
