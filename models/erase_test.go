package models

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holding says which of the database's files hold marker.
func holding(t *testing.T, dbPath, marker string) []string {
	t.Helper()
	var in []string
	for _, f := range []string{dbPath, dbPath + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			in = append(in, filepath.Base(f))
		}
	}
	return in
}

// waitGone waits up to 10 s for marker to leave the database file and its
// -wal, and fails the test naming the files that still hold it.
func waitGone(t *testing.T, dbPath, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := holding(t, dbPath, marker)
		if len(in) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the deletion, %q is still in %v", marker, in)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDeletionLeavesNoTextInTheWAL deletes an account, then another user's
// conversation, each written over several times (every write of a page
// appends a copy of it to the -wal), while a second account stays: within
// a bounded time neither the database file nor its -wal holds a marker of
// the deleted text (secure_delete cleans the file; the log keeps copies
// until a checkpoint restarts it and cuts the file).
func TestDeletionLeavesNoTextInTheWAL(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "palaver.db")
	s, err := Open(dbPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "root", "hash", true); err != nil {
		t.Fatal(err)
	}
	ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
	annMark, bobMark := "annzq"+"secretmarker", "bobzq"+"secretmarker"
	for i := range 5 {
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: fmt.Sprintf("%s question %d", annMark, i)}, annMark+" reply "+strings.Repeat("x", 2000))
		if _, err := s.RenameExchange(ctx, ann.ID, ex.ID, annMark+" title"); err != nil {
			t.Fatal(err)
		}
	}
	page := mustPage(t, s, ann.ID, annMark+" page")
	for i := range 3 {
		if _, err := s.UpdatePage(ctx, ann.ID, page.ID, nil, fmt.Sprintf("%s revision %d", annMark, i)); err != nil {
			t.Fatal(err)
		}
	}
	bobEx, _, _ := mustTurn(t, s, TurnStart{UserID: bob.ID, Query: bobMark + " question"}, bobMark+" reply")
	mustTurn(t, s, TurnStart{UserID: bob.ID, ExchangeID: bobEx.ID, Query: bobMark + " again"}, bobMark+" reply again")
	kept, _, _ := mustTurn(t, s, TurnStart{UserID: bob.ID, Query: "bob keeps this one"}, "kept reply")
	if len(holding(t, dbPath, annMark)) == 0 || len(holding(t, dbPath, bobMark)) == 0 {
		t.Fatal("the markers are not in the files before the deletion: the test would prove nothing")
	}

	if _, err := s.DeleteOwnAccount(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dbPath, annMark)

	// A reader holds the log while the conversation goes: the checkpoint
	// waits for it, and runs once it has let go.
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	reader, err := db.QueryContext(ctx, "SELECT id FROM messages") // an open cursor: a read transaction
	if err != nil {
		t.Fatal(err)
	}
	if !reader.Next() {
		t.Fatal("no messages")
	}
	if _, err := s.DeleteExchange(ctx, bob.ID, bobEx.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if len(holding(t, dbPath, bobMark)) == 0 {
		t.Log("the marker left while a reader held the log") // a checkpoint copies what no reader needs
	}
	reader.Close()
	waitGone(t, dbPath, bobMark)
	if msgs, err := s.Messages(ctx, bob.ID, kept.ID, nil); err != nil || len(msgs) != 2 {
		t.Fatalf("bob's other conversation: %d messages, %v", len(msgs), err)
	}
}

// TestJournalSizeLimit: every connection caps the -wal file it leaves
// after a checkpoint restarts the log.
func TestJournalSizeLimit(t *testing.T) {
	s := newSQLite(t, Options{})
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 { // several of the pool's connections
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var limit int64
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_size_limit").Scan(&limit); err != nil {
			t.Fatal(err)
		}
		if limit != walLimit {
			t.Fatalf("journal_size_limit %d, want %d", limit, walLimit)
		}
	}
}
