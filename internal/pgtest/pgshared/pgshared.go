// Package pgshared is the part of package pgtest that needs no store: the
// shared test database's URL, the lock that the tests of every package take
// in turns, and the wipe. models' own tests use it directly (pgtest imports
// models, so they cannot import pgtest); every other package uses pgtest.
package pgshared

import (
	"context"
	"database/sql"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Env names the shared test database's URL.
const Env = "PALAVER_TEST_POSTGRES"

// testLock is the advisory lock every test that wipes or uses the shared
// database holds while it runs, so that the test binaries of different
// packages, which go test runs in parallel, take turns.
const testLock = 7_265_100

// DSN is the shared test database's URL; the test skips when it is unset.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		t.Skipf("set %s to a postgres:// URL to run this test on PostgreSQL", Env)
	}
	return dsn
}

// Take takes the shared database for the test: it holds the lock on a
// connection of its own until the test ends (its cleanup runs after those
// of stores the test opens later), and returns the database's URL.
func Take(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		t.Fatalf("postgres: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", testLock); err != nil {
		conn.Close()
		db.Close()
		t.Fatalf("postgres test lock: %v", err)
	}
	t.Cleanup(func() {
		conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", testLock)
		conn.Close()
		db.Close()
	})
	return dsn
}

// Wipe empties the database (its public schema), for a test that holds
// it (Take).
func Wipe(t testing.TB, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec("DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
		t.Fatalf("reset postgres schema: %v", err)
	}
}
