package models

import (
	"context"
	"errors"
	"strings"
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

// TestComposeInstructionsSources: the composed text follows its sources on
// both dialects: nothing for a person with no instructions and no memory;
// the account's instructions and the memory entries (oldest first, the
// newest that fit the budget); none of the memory with the switch off or
// in a temporary chat; another person's exchange is not found.
func TestComposeInstructionsSources(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "a", Owner: "t"}, "ok")
		tmp, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "b", Owner: "t", Temporary: true}, "ok")
		if c, err := s.ComposeInstructions(ctx, ann.ID, ex.ID); err != nil || c.Text != "" {
			t.Fatalf("nothing to say: %q, %v", c.Text, err)
		}
		if _, err := s.ComposeInstructions(ctx, bob.ID, ex.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob composes for ann's exchange: %v", err)
		}
		// Four long entries and two short ones: the oldest no longer fits.
		long := func(c string) string { return strings.Repeat(c, MaxMemory-1) }
		for _, m := range []string{long("a"), long("b"), long("c"), long("d"), "likes tea", "lives by the sea"} {
			if _, err := s.AddMemory(ctx, ann.ID, m, nil); err != nil {
				t.Fatal(err)
			}
		}
		want := "What you remember about the person:\n- " + long("b") + "\n- " + long("c") + "\n- " + long("d") +
			"\n- likes tea\n- lives by the sea"
		if c, err := s.ComposeInstructions(ctx, ann.ID, ex.ID); err != nil || c.Text != want {
			t.Errorf("memory only, newest that fit:\n%q, %v", c.Text, err)
		}
		if c, _ := s.ComposeInstructions(ctx, ann.ID, tmp.ID); c.Text != "" {
			t.Errorf("a temporary chat was given memory: %q", c.Text)
		}
		if _, err := s.SetInstructions(ctx, ann.ID, "I garden.", "Short answers.", false); err != nil {
			t.Fatal(err)
		}
		want = "About the person you are talking to:\nI garden.\n\nHow the person wants you to answer:\nShort answers."
		if c, err := s.ComposeInstructions(ctx, ann.ID, ex.ID); err != nil || c.Text != want {
			t.Errorf("memory off:\n%q, %v", c.Text, err)
		}
	})
}
