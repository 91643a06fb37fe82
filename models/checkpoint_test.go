package models

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestCheckpointsInTheBackground: a large write's commit (as a fork's)
// reaches the database file itself (read with the log ignored) shortly
// after, with no further commit; SQLite's automatic checkpoint alone would
// leave so short a log in the -wal file until it held 1,000 pages.
func TestCheckpointsInTheBackground(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "palaver.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// The migrations' own checkpoint, if any, is past: what follows is
	// in the log only.
	time.Sleep(2 * checkpointQuiet)
	if err := s.transactLarge(ctx, func(tx *gorm.DB) error {
		return tx.Exec("INSERT INTO users (username, password_hash, is_admin, created_at) VALUES ('checkpointed', 'h', false, ?)", now()).Error
	}); err != nil {
		t.Fatal(err)
	}
	// immutable=1: SQLite reads the database file as it is on disk, and
	// neither the -wal file nor its index. Such a connection also takes
	// the file never to change: each look opens a new one.
	file, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	file.SetMaxIdleConns(0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int64
		err := file.QueryRow("SELECT COUNT(*) FROM users WHERE username = 'checkpointed'").Scan(&n)
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the user is not in the database file 5 s after its commit (count %d, %v)", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
