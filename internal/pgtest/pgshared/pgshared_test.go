package pgshared

import (
	"context"
	"database/sql"
	"testing"
)

// While a test holds the shared database, another session (another
// package's test binary) cannot take it: it waits its turn.
func TestTakeHoldsTheLock(t *testing.T) {
	dsn := Take(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got bool
	if err := db.QueryRowContext(context.Background(), "SELECT pg_try_advisory_lock($1)", testLock).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got {
		db.Exec("SELECT pg_advisory_unlock($1)", testLock)
		t.Fatal("another session took the test lock while this test holds it")
	}
}
