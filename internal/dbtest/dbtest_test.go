package dbtest_test

import (
	"path/filepath"
	"testing"

	"palaver/internal/dbtest"
	"palaver/models"
)

// A dump shows text as text, follows the queries' order, and changes when
// a row does.
func TestDump(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "d.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER); INSERT INTO t VALUES (1, 'ann', NULL), (2, 'bob', 7)"); err != nil {
		t.Fatal(err)
	}
	before := dbtest.Dump(t, db, "SELECT * FROM t ORDER BY id", "SELECT count(*) FROM t")
	if want := "1 ann <nil>\n2 bob 7\n2\n"; before != want {
		t.Fatalf("dump %q, want %q", before, want)
	}
	if _, err := db.Exec("UPDATE t SET n = 8 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if after := dbtest.Dump(t, db, "SELECT * FROM t ORDER BY id", "SELECT count(*) FROM t"); after == before {
		t.Fatalf("a changed row dumps the same: %q", after)
	}
}
