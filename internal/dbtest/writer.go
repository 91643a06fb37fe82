package dbtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// HoldWriter takes SQLite's writer on a connection of its own (a raw
// BEGIN IMMEDIATE, as an import or a backup would) and gives it back after
// d; the channel closes then. store is a models.Store (its SQL handle).
func HoldWriter(t testing.TB, store interface{ SQL() (*sql.DB, error) }, d time.Duration) <-chan struct{} {
	t.Helper()
	db, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(d)
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
	}()
	return released
}
