package models

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pragma reads one pragma through the pool, as any request would.
func pragma(t *testing.T, s *Store, name string) string {
	t.Helper()
	var v string
	if err := s.db.Raw("PRAGMA " + name).Row().Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestSQLiteSettings(t *testing.T) {
	for _, tc := range []struct {
		opts        Options
		synchronous string
	}{
		{Options{}, "2"}, // FULL: a committed message survives a power cut
		{Options{Synchronous: "full"}, "2"},
		{Options{Synchronous: "normal"}, "1"},
	} {
		t.Run("synchronous="+tc.opts.Synchronous, func(t *testing.T) {
			s := newSQLite(t, tc.opts)
			// Every pooled connection must carry the settings, not just the
			// first: hold several at once and ask each.
			sqlDB, _ := s.SQL()
			ctx := context.Background()
			for i := range 3 {
				conn, err := sqlDB.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				for name, want := range map[string]string{
					"journal_mode":  "wal",
					"foreign_keys":  "1",
					"synchronous":   tc.synchronous,
					"secure_delete": "1",
				} {
					var got string
					if err := conn.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got); err != nil {
						t.Fatalf("conn %d: PRAGMA %s: %v", i, name, err)
					}
					if got != want {
						t.Errorf("conn %d: PRAGMA %s = %q, want %q", i, name, got, want)
					}
				}
				var busy int
				if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
					t.Fatal(err)
				}
				if busy <= 0 {
					t.Errorf("conn %d: busy_timeout = %d, want > 0", i, busy)
				}
			}
		})
	}
}

func TestSQLiteRejectsUnknownSynchronous(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{Synchronous: "off"})
	if err == nil || !strings.Contains(err.Error(), "synchronous") {
		t.Fatalf("Open with synchronous=off: err = %v, want one about synchronous", err)
	}
}

// TestSQLiteOpenCreatesFolderAndKeepsOddPaths opens a file in a folder that
// does not exist yet, under a name holding characters SQLite's URI filenames
// treat specially; the file must be created exactly there.
func TestSQLiteOpenCreatesFolderAndKeepsOddPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new folder", "a#b?c%20d.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at %s: %v", path, err)
	}
	if got := pragma(t, s, "journal_mode"); got != "wal" {
		t.Errorf("journal_mode = %q, want wal (the parameters were lost)", got)
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		err := s.db.Create(&APIKey{UserID: 424242, KeyHash: "k", CreatedAt: now()}).Error
		if err == nil {
			t.Fatal("an api key for a missing user was accepted")
		}
	})
}

// TestFullTextIndex proves the full-text index exists (on SQLite: the build
// has FTS5, so the sqlite_fts5 tag was given) and follows the messages table
// (on SQLite once it has caught up, as every search does first: 00015).
func TestFullTextIndex(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		u := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "where do pelicans winter"}, "on warm coasts")
		search := func(word string) []int64 {
			if err := s.CatchUpSearch(context.Background()); err != nil {
				t.Fatal(err)
			}
			var ids []int64
			q := "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank"
			if s.Dialect() == "postgres" {
				q = "SELECT id FROM messages WHERE content_tsv @@ plainto_tsquery('palaver', ?) ORDER BY id"
			}
			if err := s.db.Raw(q, word).Scan(&ids).Error; err != nil {
				t.Fatalf("search %q: %v", word, err)
			}
			return ids
		}
		if got := search("pelicans"); len(got) != 1 {
			t.Fatalf("search pelicans: %v, want the user message", got)
		}
		if got := search("coasts"); len(got) != 1 {
			t.Fatalf("search coasts: %v, want the reply", got)
		}
		if got := search("penguins"); len(got) != 0 {
			t.Fatalf("search penguins: %v, want nothing", got)
		}
		if _, err := s.DeleteExchange(context.Background(), u.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if got := search("pelicans"); len(got) != 0 {
			t.Fatalf("after the exchange was deleted, search still finds %v", got)
		}
	})
}
