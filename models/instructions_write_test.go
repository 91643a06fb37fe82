package models

import (
	"context"
	"testing"
)

// TestComposeInstructionsKeptTextWritesNothing: composing a text that is
// kept already commits nothing (on SQLite an ignored INSERT into an
// AUTOINCREMENT table would still commit its counter's page: a durable
// write per turn), while a new text is kept.
func TestComposeInstructionsKeptTextWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	u := mustUser(t, s, "kept")
	ex, _ := mustStart(t, s, TurnStart{UserID: u.ID, AgentType: "router", Query: "hello", Owner: "test"})
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// data_version, read on a connection of its own, moves when another
	// connection commits.
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	version := func() int64 {
		t.Helper()
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	first, err := s.ComposeInstructions(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	v0 := version()
	again, err := s.ComposeInstructions(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash != first.Hash {
		t.Fatalf("the same sources composed %q, then %q", first.Hash, again.Hash)
	}
	if v := version(); v != v0 {
		t.Errorf("composing a kept text committed a write (data_version %d -> %d)", v0, v)
	}
	var n int64
	if err := s.db.Model(&InstructionText{}).Where("user_id = ?", u.ID).Count(&n).Error; err != nil || n != 1 {
		t.Fatalf("kept texts = %d, %v; want 1", n, err)
	}
	// A new text is still kept.
	if err := s.db.Exec(`INSERT INTO account_instructions (user_id, about, style, memory, updated_at) VALUES (?, 'likes tea', '', true, ?)`, u.ID, now()).Error; err != nil {
		t.Fatal(err)
	}
	changed, err := s.ComposeInstructions(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Hash == first.Hash {
		t.Fatal("new instructions composed the old text")
	}
	var text string
	if err := s.db.Raw(`SELECT text FROM instruction_texts WHERE user_id = ? AND hash = ?`, u.ID, changed.Hash).Row().Scan(&text); err != nil || text != changed.Text {
		t.Fatalf("the new text kept as %q, %v; want %q", text, err, changed.Text)
	}
}
