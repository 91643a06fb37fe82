package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"palaver/internal/dbtest"
	"palaver/internal/pgtest/pgshared"
)

// postgresEnv names the variable that holds a postgres:// URL for the
// Postgres runs of the store tests. Unset, those runs are skipped.
//
// These tests reach the shared database through pgshared, not pgtest:
// pgtest imports models, which a test in package models cannot import.
const postgresEnv = pgshared.Env

// newSQLite opens and migrates a fresh SQLite file in a temporary folder.
func newSQLite(t testing.TB, opts Options) *Store {
	t.Helper()
	template, err := migratedSQLite()
	if err != nil {
		t.Fatalf("the migrated database the tests start from: %v", err)
	}
	path := filepath.Join(t.TempDir(), "palaver.db")
	if err := os.WriteFile(path, template, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	// Nothing is left to apply: this checks so, and starts the store as
	// after any migration.
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return s
}

// migratedSQLite is the file of a freshly migrated SQLite database, made once
// per test binary (dbtest.MigratedFile): each store starts from a copy.
var migratedSQLite = dbtest.MigratedFile(func(path string) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	if _, err := s.Migrate(context.Background()); err != nil {
		s.Close()
		return err
	}
	return s.Close()
})

// newPostgres opens the database named by PALAVER_TEST_POSTGRES, wipes its
// public schema and migrates it; it skips the test when the variable is unset.
// The test holds the database until it ends (pgshared.Take): the tests of
// every package share it, in turns.
func newPostgres(t testing.TB) *Store {
	t.Helper()
	s := openWiped(t)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s
}

// openWiped takes the shared database for the test and wipes it: a store on
// an empty, unmigrated PostgreSQL database.
func openWiped(t testing.TB) *Store {
	t.Helper()
	s, err := Open(pgshared.Take(t), Options{})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	pgshared.Wipe(t, sqlDB)
	return s
}

// eachDB runs fn on a fresh SQLite store and, when configured, on a fresh
// PostgreSQL one.
func eachDB(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, newSQLite(t, Options{})) })
	t.Run("postgres", func(t *testing.T) { fn(t, newPostgres(t)) })
}

// eachEmptyDB runs fn on an empty, unmigrated SQLite database and (with
// PALAVER_TEST_POSTGRES) on a wiped PostgreSQL one: for the tests of one
// migration, which migrate to the version before it themselves.
func eachEmptyDB(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := Open(filepath.Join(t.TempDir(), "palaver.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) { fn(t, openWiped(t)) })
}

func mustUser(t testing.TB, s *Store, name string) *User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), name, "hash-of-"+name, false)
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

func mustPage(t testing.TB, s *Store, userID int64, title string) *Page {
	t.Helper()
	at := now()
	p := &Page{UserID: userID, Title: title, Content: "# " + title, CreatedAt: at, UpdatedAt: at}
	if err := s.db.Create(p).Error; err != nil {
		t.Fatalf("create page: %v", err)
	}
	return p
}

// mustStart starts a turn and fails the test if it does not start.
func mustStart(t testing.TB, s *Store, ts TurnStart) (*Exchange, *Message) {
	t.Helper()
	if ts.Scope == "" {
		ts.Scope = ScopeGeneral
	}
	if ts.AgentType == "" {
		ts.AgentType = "router"
	}
	if ts.Owner == "" {
		ts.Owner = "owner-1"
	}
	ex, msg, err := s.StartTurn(context.Background(), ts)
	if err != nil {
		t.Fatalf("start turn %+v: %v", ts, err)
	}
	return ex, msg
}

// mustTurn runs a whole successful turn: the query, then an assistant reply.
func mustTurn(t testing.TB, s *Store, ts TurnStart, reply string) (*Exchange, *Message, *Message) {
	t.Helper()
	ex, q := mustStart(t, s, ts)
	a := assistant(reply)
	if err := s.FinishTurn(context.Background(), ex.ID, *ex.TurnOwner, a); err != nil {
		t.Fatalf("finish turn: %v", err)
	}
	return ex, q, a
}

func assistant(content string) *Message {
	agent := "router"
	return &Message{Role: RoleAssistant, Content: content, AgentType: &agent,
		AgentResponse: &AgentResponse{Content: content, AgentType: agent, Confidence: "low",
			Suggestions: []Suggestion{}, Metadata: map[string]any{"provider": "test"}}}
}

// count counts the rows of table matching where.
func count(t testing.TB, s *Store, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", table, where)
	if err := s.db.Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// reload reads an exchange back without the user scope.
func reload(t testing.TB, s *Store, id int64) Exchange {
	t.Helper()
	var e Exchange
	if err := s.db.Take(&e, id).Error; err != nil {
		t.Fatalf("reload exchange %d: %v", id, err)
	}
	return e
}

func setUpdatedAt(t testing.TB, s *Store, exchangeID int64, at time.Time) {
	t.Helper()
	if err := s.db.Exec("UPDATE exchanges SET updated_at = ? WHERE id = ?", at.UTC(), exchangeID).Error; err != nil {
		t.Fatalf("set updated_at: %v", err)
	}
}

func wantErr(t testing.TB, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func seqs(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if m.Seq == nil {
			out[i] = m.Role + "@-"
		} else {
			out[i] = fmt.Sprintf("%s@%d", m.Role, *m.Seq)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// errOf is the error of a two-valued call, for a test that checks only it.
func errOf[T any](_ T, err error) error { return err }

// planConn is a connection of s with qs run on it (a history for SQLite's
// planner to weigh), closed with the test.
func planConn(t *testing.T, s *Store, qs ...string) *sql.Conn {
	t.Helper()
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range qs {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn
}

// queryPlan is SQLite's plan of q with args, a step a line.
func queryPlan(t *testing.T, conn *sql.Conn, q string, args ...any) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}
